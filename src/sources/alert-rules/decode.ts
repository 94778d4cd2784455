import { fieldListDecoder, readFieldList } from '../../upstream/fields/body.js';
import { declareFields } from '../../upstream/fields/declare.js';
import { durationText } from '../../upstream/fields/kinds.js';
import { findersOf } from '../../upstream/fields/resolve.js';
import type { JsonDecoder } from '../../upstream/tolerant/body.js';

/**
 * `/alerts`: the alert rules. A rule may come as separate fields (`metric`, `operator`,
 * `threshold`), nested in a condition object, or as one expression string such as
 * `system.cpu.user > 90` (event messages read like that), with the threshold as a number or a
 * numeric string (`"90"`, `"90%"`); its scope as a host (`host_uuid`) or a list of hosts
 * (`scope.hosts`). Only `id` is required (a number or any string); a rule without a readable
 * condition is still listed, without a threshold.
 */
export const ALERT_RULE_FIELDS = declareFields({
  id: { kind: 'id', about: 'the rule id', words: [['id'], ['uuid']], not: ['host', 'hosts', 'metric', 'account', 'scope'], essential: true },
  name: { kind: 'string', about: 'the rule name', words: [['name'], ['title'], ['description']], not: ['metric', 'host', 'hosts', 'condition', 'scope'], useful: true },
  metric: { kind: 'string', about: 'the agent metric the rule watches', words: [['metric', 'name'], ['metric']], not: ['unit', 'threshold', 'operator', 'op', 'value'], useful: true, alternatives: ['expression'] },
  operator: { kind: 'string', about: 'how the metric is compared (>, <, ...)', words: [['operator'], ['op'], ['comparison'], ['comparator']], useful: true, alternatives: ['expression'] },
  threshold: {
    kind: 'number',
    about: 'the value the metric is compared with, as upstream stores it',
    words: [['threshold'], ['condition', 'value'], ['limit'], ['value']],
    not: ['metric', 'operator', 'op', 'duration', 'id', 'name', 'unit', 'hosts', 'created', 'updated'],
    useful: true,
    alternatives: ['expression'],
  },
  duration: { kind: 'duration', about: 'how long the condition must hold before the rule fires', words: [['duration'], ['period']], not: ['evaluation', 'interval', 'check'], unit: 'seconds', useful: true },
  enabled: {
    kind: 'state',
    about: 'whether the rule is enabled',
    words: [['enabled'], ['active'], ['paused'], ['disabled'], ['muted'], ['status'], ['state']],
    not: ['code', 'at', 'created', 'updated'],
    trueWords: ['enabled', 'active', 'on', 'armed', 'true', 'yes'],
    falseWords: ['disabled', 'paused', 'inactive', 'off', 'muted', 'false', 'no'],
    useful: true,
  },
  hosts: { kind: 'strings', about: 'the hosts the rule is bound to (none: every host)', words: [['hosts', 'uuid'], ['hosts', 'id'], ['hosts']], not: ['name', 'count', 'tags', 'group'], useful: true },
  expression: { kind: 'string', about: 'the condition as one expression (system.cpu.user > 90)', words: [['expression'], ['condition'], ['expr'], ['query'], ['definition'], ['rule']], not: ['id', 'name'], useful: true, alternatives: ['metric'] },
});
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
  /** The hosts the rule is bound to (its scope); undefined: every host. */
  readonly hosts?: readonly string[];
  /** The rule names a scope that could not be read: which hosts it is bound to is unknown (never "every host"). */
  readonly hosts_unknown?: true;
}

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

export function normaliseOperator(text: string): string {
  return OPERATOR_WORDS[text.trim().toLowerCase()] ?? text.trim();
}

/**
 * A query in the monitor style of several vendors: `avg(last_5m):system.cpu.user{host:web-1} > 90`:
 * an aggregation over a window, the metric with its scope, the comparison.
 */
const WINDOWED_QUERY = /^\s*[a-z_]+\(\s*last_(\d+\s*[smhdw])\s*\)\s*:\s*([a-z0-9_][a-z0-9_.|/-]*)\s*(?:\{[^}]*\})?\s*(.*)$/i;

/** `system.cpu.user > 90`, `avg(system.cpu.user) >= 90%`, `nginx.http.status.5xx > 10 for 5m`, `avg(last_5m):system.cpu.user{host:web-1} > 90`. */
export function parseExpression(
  text: string | undefined,
): { metric: string; operator: string; threshold: number; durationSeconds: number | undefined } | undefined {
  if (text === undefined) return undefined;
  const windowed = WINDOWED_QUERY.exec(text);
  if (windowed !== null) {
    const [, window = '', metric = '', comparison = ''] = windowed;
    const parsed = parseExpression(`${metric} ${comparison}`);
    return parsed && { ...parsed, durationSeconds: parsed.durationSeconds ?? durationText(window.replace(/\s+/g, '')) };
  }
  const match = EXPRESSION.exec(text);
  if (!match) return undefined;
  const [, metric = '', operator = '', value = '', duration] = match;
  return {
    metric,
    operator: normaliseOperator(operator),
    threshold: Number(value),
    durationSeconds: duration === undefined ? undefined : durationText(/^\d+$/.test(duration.trim()) ? `${duration.trim()}s` : duration),
  };
}

const ruleFinder = findersOf(ALERT_RULE_FIELDS);

const RULE_LIST_KEYS = ['rules', 'alert_rules', 'alertRules', 'alerts'];

export const decodeAlertRules: JsonDecoder<readonly AlertRule[]> = fieldListDecoder({ keys: RULE_LIST_KEYS, finders: ruleFinder }, (raw, context, options) => {
  const body = readFieldList(raw, context, { what: 'alert rule list', keys: RULE_LIST_KEYS, finder: ruleFinder(options?.fieldPaths) });
  const rules = body.records.map((r, index): AlertRule => {
    const parsed = parseExpression(r.expression);
    const rule: { -readonly [K in keyof AlertRule]: AlertRule[K] } = { id: r.id ?? '' };
    const put = <K extends keyof AlertRule>(key: K, value: AlertRule[K] | undefined) => {
      if (value !== undefined && value !== '') rule[key] = value;
    };
    put('name', r.name);
    put('metric', r.metric ?? parsed?.metric);
    put('operator', r.operator === undefined ? parsed?.operator : normaliseOperator(r.operator));
    put('threshold', r.threshold ?? parsed?.threshold);
    put('duration_seconds', r.duration ?? parsed?.durationSeconds);
    put('enabled', r.enabled);
    const hosts = r.hosts?.filter((uuid) => uuid.trim() !== '');
    if (hosts !== undefined && hosts.length > 0) rule.hosts = hosts;
    if (body.unreadable[index]?.includes('hosts') === true) rule.hosts_unknown = true;
    return rule;
  });
  // An expression no rule's could be read is no condition: what it stood for is missing, said as such.
  const unparsed = body.records.some((r) => r.expression !== undefined) && rules.every((rule) => rule.metric === undefined);
  const missing = unparsed ? [...new Set([...body.report.missing, 'metric', 'operator', 'threshold'])] : body.report.missing;
  const notes = unparsed ? [...body.notes, { field: 'expression', issue: `${body.report.found.expression?.sample ?? 'the expression'}: no metric, comparison and threshold could be read from it` }] : body.notes;
  return { value: rules, dropped: body.dropped, notes, fields: { ...body.report, missing } };
});
