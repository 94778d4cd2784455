import type { Topic } from '../sources/source.js';

/**
 * The topics every unit's sources provide, by unit: the one place a value one source learned
 * reaches another. A source sets only the topics it declares it provides (`topic(provider, ...)`
 * names the provider) and reads them typed; each change is announced, so per-target jobs
 * follow.
 */
export class TopicBoard {
  private readonly values = new Map<string, Map<string, unknown>>();
  private readonly listeners: ((unit: string, topic: string) => void)[] = [];

  provide<T>(unit: string, topic: Topic<T>, value: T): void {
    let byUnit = this.values.get(topic.name);
    if (byUnit === undefined) this.values.set(topic.name, (byUnit = new Map<string, unknown>()));
    byUnit.set(unit, value);
    for (const listener of this.listeners) listener(unit, topic.name);
  }

  read<T>(unit: string, topic: Topic<T>): T {
    const byUnit = this.values.get(topic.name);
    // Only `provide` stores under a topic's name, always with that topic's type.
    return byUnit?.has(unit) ? (byUnit.get(unit) as T) : topic.empty;
  }

  readAll<T>(topic: Topic<T>): ReadonlyMap<string, T> {
    // As in `read`: every value under this name was provided with the topic's type.
    return (this.values.get(topic.name) ?? new Map<string, T>()) as ReadonlyMap<string, T>;
  }

  /** A unit went away (an account removed by a reload): its values go, and readers hear of it. */
  forgetUnit(unit: string): void {
    for (const [name, byUnit] of this.values) {
      if (byUnit.delete(unit)) for (const listener of this.listeners) listener(unit, name);
    }
  }

  onChange(listener: (unit: string, topic: string) => void): () => void {
    this.listeners.push(listener);
    return () => {
      const index = this.listeners.indexOf(listener);
      if (index >= 0) this.listeners.splice(index, 1);
    };
  }
}
