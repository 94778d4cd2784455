import protobuf from 'protobufjs';
import { compress, uncompress } from 'snappyjs';

/**
 * Prometheus remote write 1.0 on the wire: a `prometheus.WriteRequest` in protobuf, the body
 * compressed with snappy's block format (not its framed format), POSTed with the headers of
 * `REMOTE_WRITE_HEADERS`. The message types are declared here rather than generated from
 * Prometheus' .proto files: 1.0 uses four small messages and never changes them.
 */

export type Labels = Readonly<Record<string, string>>;

export interface Sample {
  readonly value: number;
  readonly timestampMs: number;
}

/** One series: its labels (`__name__` among them) and its samples, oldest first. */
export interface TimeSeries {
  readonly labels: Labels;
  readonly samples: readonly Sample[];
}

export const REMOTE_WRITE_HEADERS = {
  'content-type': 'application/x-protobuf',
  'content-encoding': 'snappy',
  'x-prometheus-remote-write-version': '0.1.0',
} as const;

const root = protobuf.Root.fromJSON({
  nested: {
    prometheus: {
      nested: {
        WriteRequest: { fields: { timeseries: { rule: 'repeated', type: 'TimeSeries', id: 1 } } },
        TimeSeries: { fields: { labels: { rule: 'repeated', type: 'Label', id: 1 }, samples: { rule: 'repeated', type: 'Sample', id: 2 } } },
        Label: { fields: { name: { type: 'string', id: 1 }, value: { type: 'string', id: 2 } } },
        Sample: { fields: { value: { type: 'double', id: 1 }, timestamp: { type: 'int64', id: 2 } } },
      },
    },
  },
});
const WriteRequest = root.lookupType('prometheus.WriteRequest');

/** Series as the protocol wants them: labels sorted by name, samples by time. */
function wireSeries(series: TimeSeries) {
  const labels = Object.keys(series.labels)
    .sort()
    .map((name) => ({ name, value: series.labels[name] as string }));
  return { labels, samples: series.samples.map((s) => ({ value: s.value, timestamp: s.timestampMs })) };
}

/** The compressed body of a write request carrying these series. */
export function encodeWriteRequest(series: readonly TimeSeries[]): Uint8Array {
  const message = WriteRequest.fromObject({ timeseries: series.map(wireSeries) });
  return compress(WriteRequest.encode(message).finish());
}

/** The reverse of `encodeWriteRequest`: what a receiver reads (tests use it for fake receivers). */
export function decodeWriteRequest(body: Uint8Array): TimeSeries[] {
  const decoded = WriteRequest.toObject(WriteRequest.decode(uncompress(body)), { longs: Number, defaults: true }) as {
    timeseries: { labels: { name: string; value: string }[]; samples: { value: number; timestamp: number }[] }[];
  };
  return decoded.timeseries.map((ts) => ({
    labels: Object.fromEntries(ts.labels.map((l) => [l.name, l.value])),
    samples: ts.samples.map((s) => ({ value: s.value, timestampMs: s.timestamp })),
  }));
}

/** Samples in a list of series. */
export function sampleCount(series: readonly TimeSeries[]): number {
  let n = 0;
  for (const s of series) n += s.samples.length;
  return n;
}
