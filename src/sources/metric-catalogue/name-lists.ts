/**
 * One shared, frozen copy of each distinct list of metric names, and of each name. Hosts of
 * one kind report the same names, so without it every host kept a list and strings of its
 * own (decoded from its own response) for as long as it is polled: at a million series most
 * of the retained heap, and most of what each garbage collection walks.
 *
 * Lists no host holds any more are dropped once the table holds twice as many as are in use.
 */
export class SharedNameLists {
  private readonly lists = new Map<string, readonly string[]>();
  private readonly names = new Map<string, string>();
  /** Each list's names to their places, made when a list is first compared. */
  private readonly positions = new WeakMap<readonly string[], ReadonlyMap<string, number>>();

  /** The shared copy of `names`; `inUse` are the lists hosts hold now (all from this table). */
  share(names: readonly string[], inUse: () => Iterable<readonly string[]>): readonly string[] {
    const key = JSON.stringify(names);
    const known = this.lists.get(key);
    if (known) return known;
    if (this.lists.size >= 16) this.dropUnused([...inUse()]);
    const list = Object.freeze(names.map((name) => this.name(name)));
    this.lists.set(key, list);
    return list;
  }

  /**
   * Whether `names` (any order, repeats allowed) are exactly the names of `list`, one of this
   * table's lists: a catalogue that did not change is told in one pass, without sorting it.
   */
  holdsExactly(list: readonly string[], names: readonly string[]): boolean {
    let positions = this.positions.get(list);
    if (positions === undefined) this.positions.set(list, (positions = new Map(list.map((name, index) => [name, index]))));
    const seen = new Uint8Array(list.length);
    let distinct = 0;
    for (const name of names) {
      const at = positions.get(name);
      if (at === undefined) return false;
      if (seen[at] === 0) {
        seen[at] = 1;
        distinct++;
      }
    }
    return distinct === list.length;
  }

  get size(): number {
    return this.lists.size;
  }

  private name(name: string): string {
    const known = this.names.get(name);
    if (known !== undefined) return known;
    this.names.set(name, name);
    return name;
  }

  private dropUnused(inUse: readonly (readonly string[])[]): void {
    if (this.lists.size < 2 * inUse.length) return;
    this.lists.clear();
    this.names.clear();
    for (const list of inUse) {
      this.lists.set(JSON.stringify(list), list);
      for (const name of list) this.names.set(name, name);
    }
  }
}
