/** What a LiveSet holds: an object that remembers its place in it (-1 when not in it). */
export interface LiveSetMember {
  liveIndex: number;
}

/**
 * A set of short-lived objects that a long-lived owner adds and deletes at a high rate
 * (a model's requests in flight), in O(1) without a hash table. A long-lived Set or Map
 * used so defeats V8's young generation: each rehash leaves the old table, dead but in
 * the old generation, pointing at the new table and at what it held, and the scavenger
 * takes every pointer from the old generation as a root. So each new table and every
 * member survived into the old generation, and the objects they reached with them: at
 * 64 callers of a no-op model, scavenges took 10 ms instead of 1, a full collection ran
 * every third of a second, and a request cost twice its time.
 */
export class LiveSet<T extends LiveSetMember> {
  private readonly members: (T | undefined)[] = [];
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(member: T): void {
    member.liveIndex = this.count;
    this.members[this.count++] = member;
  }

  /** Takes `member` out (its place goes to the last one); a member not in the set is ignored. */
  delete(member: T): void {
    const index = member.liveIndex;
    if (index < 0 || this.members[index] !== member) return;
    const last = this.members[--this.count]!;
    this.members[index] = last;
    last.liveIndex = index;
    // Cleared, so that the array names no member that left.
    this.members[this.count] = undefined;
    member.liveIndex = -1;
  }

  /** The members now, in no particular order. */
  toArray(): T[] {
    return this.members.slice(0, this.count) as T[];
  }
}
