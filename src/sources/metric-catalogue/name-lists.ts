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
