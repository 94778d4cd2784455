import { readList, type JsonDecoder } from '../../upstream/tolerant/body.js';
import type { Fields } from '../../upstream/tolerant/fields.js';
import { boolean, describe, nonEmptyString, number, string, type ValueReader } from '../../upstream/tolerant/values.js';

/**
 * `/alerts`: the alert rules. A rule may come as separate fields (`metric`, `operator`,
 * `threshold`) or as one expression string such as `system.cpu.user > 90` (event messages
 * read like that), with the threshold as a number or a numeric string (`"90"`, `"90%"`).
 * Only `id` is required (a number or any string); a rule without a readable condition is
 * still listed, without a threshold.
 */
export interface AlertRule {
  readonly id: string;
  readonly name?: string;
  /** The dotted agent metric the rule watches. */
  readonly metric?: string;
  /** `>`, `>=`, `<`, `<=`, `==`, `!=`, or the text sent when it is none of those. */
  readonly operator?: string;
  /** As upstream stores it, in the metric's own unit (percent 0-100 for a percentage). */
  readonly threshold?: number;
  readonly duration_seconds?: number;
  readonly enabled?: boolean;
  /** The host the rule is bound to; undefined: every host. */
  readonly host_uuid?: string;
}

const EXPRESSION_KEYS = ['expression', 'condition', 'expr', 'rule', 'query', 'definition'];
const OPERATOR_WORDS: Readonly<Record<string, string>> = {
  '>': '>', gt: '>', above: '>', greater_than: '>', over: '>',
  '>=': '>=', gte: '>=', ge: '>=', at_least: '>=',
  '<': '<', lt: '<', below: '<', less_than: '<', under: '<',
  '<=': '<=', lte: '<=', le: '<=', at_most: '<=',
  '==': '==', '=': '==', eq: '==', equals: '==',
  '!=': '!=', '<>': '!=', ne: '!=', not_equals: '!=',
};
const EXPRESSION =
  /^\s*(?:[a-z_]+\(\s*)?([a-z0-9_][a-z0-9_.|/-]*)\s*\)?\s*(>=|<=|==|!=|<>|=|>|<)\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+))\s*%?\s*(?:for\s+(\d+\s*[smhd]?))?\s*$/i;

/** `90`, `"90"`, `"90 %"`. */
const threshold: ValueReader<number> = (raw) => number(typeof raw === 'string' ? raw.replace(/\s*%\s*$/, '') : raw);

/** Seconds as a number, or a duration such as `300s`, `5m`, `1h`. */
export const durationSeconds: ValueReader<number> = (raw) => {
  if (typeof raw === 'string') {
    const match = /^\s*(\d+(?:\.\d+)?)\s*([smhd]?)\s*$/i.exec(raw);
    if (!match) return { ok: false, reason: 'invalid_value', detail: `${describe(raw)} is not a duration` };
    const factor = { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[(match[2] ?? '').toLowerCase()] ?? 1;
    return { ok: true, value: Number(match[1]) * factor };
  }
  const read = number(raw);
  return read.ok && read.value < 0 ? { ok: false, reason: 'invalid_value', detail: `${read.value} is negative` } : read;
};

/** `active`/`enabled` versus `paused`/`disabled`, as a word or a flag. */
const enabledState: ValueReader<boolean> = (raw) => {
  if (typeof raw === 'string') {
    const word = raw.trim().toLowerCase();
    if (['enabled', 'active', 'on', 'armed'].includes(word)) return { ok: true, value: true };
    if (['disabled', 'paused', 'inactive', 'off', 'muted'].includes(word)) return { ok: true, value: false };
  }
  return boolean(raw);
};

export function normaliseOperator(text: string): string {
  return OPERATOR_WORDS[text.trim().toLowerCase()] ?? text.trim();
}

export function readAlertRule(f: Fields): AlertRule {
  const rule: { -readonly [K in keyof AlertRule]: AlertRule[K] } = { id: f.required(['id', 'rule_id', 'uuid'], nonEmptyString) };
  const put = <K extends keyof AlertRule>(key: K, value: AlertRule[K] | undefined) => {
    if (value !== undefined) rule[key] = value;
  };
  put('name', f.optional(['name', 'title', 'description'], string));
  const parsed = parseExpression(f.optional(EXPRESSION_KEYS, string));
  put('metric', f.optional(['metric', 'metric_name', 'metric.name'], nonEmptyString) ?? parsed?.metric);
  const operator = f.optional(['operator', 'op', 'comparison', 'comparator'], nonEmptyString);
  put('operator', operator === undefined ? parsed?.operator : normaliseOperator(operator));
  put('threshold', f.optional(['threshold', 'value', 'limit', 'threshold_value'], threshold) ?? parsed?.threshold);
  put('duration_seconds', f.optional(['duration_seconds', 'duration', 'for', 'period', 'for_seconds'], durationSeconds) ?? parsed?.durationSeconds);
  const paused = f.optional(['paused', 'disabled', 'muted'], boolean);
  put('enabled', f.optional(['enabled', 'is_enabled', 'active', 'status', 'state'], enabledState) ?? (paused === undefined ? undefined : !paused));
  put('host_uuid', f.optional(['host_uuid', 'host', 'host_id'], nonEmptyString));
  return rule;
}

/** `system.cpu.user > 90`, `avg(system.cpu.user) >= 90%`, `nginx.http.status.5xx > 10 for 5m`. */
export function parseExpression(
  text: string | undefined,
): { metric: string; operator: string; threshold: number; durationSeconds: number | undefined } | undefined {
  if (text === undefined) return undefined;
  const match = EXPRESSION.exec(text);
  if (!match) return undefined;
  const [, metric = '', operator = '', value = '', duration] = match;
  const seconds = duration === undefined ? undefined : durationSeconds(duration.replace(/\s+/g, ''));
  return {
    metric,
    operator: normaliseOperator(operator),
    threshold: Number(value),
    durationSeconds: seconds?.ok ? seconds.value : undefined,
  };
}

export const decodeAlertRules: JsonDecoder<readonly AlertRule[]> = (raw, context) => {
  const body = readList(raw, context, { what: 'alert rule list', keys: ['rules', 'alert_rules', 'alertRules', 'alerts'], read: readAlertRule });
  return { value: body.items, dropped: body.dropped, notes: body.notes };
};
