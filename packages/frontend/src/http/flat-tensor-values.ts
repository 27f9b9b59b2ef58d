/** Elements per block: a large tensor fills blocks one after another, never regrowing and copying one array. */
const BLOCK_LENGTH = 64 * 1024;
/** A small tensor's first block; a block doubles until it is BLOCK_LENGTH long. */
const FIRST_BLOCK_LENGTH = 16;

/**
 * A JSON tensor's elements, flattened in row-major order as the parser reads them. While
 * every element is a number (or every one a boolean) they sit in typed arrays, 8 bytes
 * (or 1) each, which a tensor takes without a JavaScript value per element; an element
 * of another kind turns them into a plain array.
 */
export class FlatTensorValues {
  private kind: 'empty' | 'numbers' | 'booleans' | 'mixed' = 'empty';
  /** Made by the first number (or boolean): a tensor of the other kind, or of strings, allocates neither. */
  private numbers: TypedBlocks<Float64Array> | undefined;
  private booleans: TypedBlocks<Uint8Array> | undefined;
  private list: unknown[] = [];
  static of(values: readonly unknown[]): FlatTensorValues {
    const flat = new FlatTensorValues();
    for (const value of values) flat.add(value);
    return flat;
  }

  /** Whether an element is a bigint (an integer beyond 2^53, read exactly). */
  hasBigInt = false;
  length = 0;

  add(value: unknown): void {
    if (this.kind === 'empty') this.kind = typeof value === 'number' ? 'numbers' : typeof value === 'boolean' ? 'booleans' : 'mixed';
    if (this.kind === 'numbers' && typeof value === 'number') {
      (this.numbers ??= new TypedBlocks(Float64Array)).push(value);
      this.length++;
    } else if (this.kind === 'booleans' && typeof value === 'boolean') {
      (this.booleans ??= new TypedBlocks(Uint8Array)).push(value ? 1 : 0);
      this.length++;
    } else {
      if (this.kind !== 'mixed') {
        this.list = this.toArray();
        this.kind = 'mixed';
      }
      if (typeof value === 'bigint') this.hasBigInt = true;
      this.list.push(value);
      this.length++;
    }
  }

  /** The elements in blocks, in order, when each one is a number (or there are none). */
  numberBlocks(): Float64Array[] | undefined {
    if (this.kind === 'empty') return [new Float64Array(0)];
    return this.kind === 'numbers' ? this.numbers!.blocks() : undefined;
  }

  /** The elements as 0/1 bytes when each one is a boolean. */
  asBooleans(): Uint8Array | undefined {
    return this.kind === 'booleans' ? this.booleans!.joined() : undefined;
  }

  /** The first element; there must be one. */
  first(): unknown {
    if (this.kind === 'mixed') return this.list[0];
    return this.kind === 'booleans' ? this.booleans!.first() === 1 : this.numbers!.first();
  }

  toArray(): unknown[] {
    if (this.kind === 'mixed') return this.list;
    if (this.kind === 'booleans') return Array.from(this.booleans!.joined(), Boolean);
    return this.numbers ? Array.from(this.numbers.joined()) : [];
  }
}

/** A growing typed array kept as fixed-size blocks, joined into one array when asked. */
class TypedBlocks<T extends Float64Array | Uint8Array> {
  private readonly full: T[] = [];
  private block: T;
  private used = 0;

  constructor(private readonly Type: new (length: number) => T) {
    this.block = new Type(FIRST_BLOCK_LENGTH);
  }

  push(value: number): void {
    if (this.used === this.block.length) this.nextBlock();
    this.block[this.used++] = value;
  }

  private nextBlock(): void {
    if (this.block.length < BLOCK_LENGTH) {
      const larger = new this.Type(this.block.length * 2);
      larger.set(this.block);
      this.block = larger;
    } else {
      this.full.push(this.block);
      this.block = new this.Type(BLOCK_LENGTH);
      this.used = 0;
    }
  }

  first(): number {
    return (this.full[0] ?? this.block)[0]!;
  }

  blocks(): T[] {
    return [...this.full, this.block.subarray(0, this.used) as T];
  }

  joined(): T {
    if (this.full.length === 0) return this.block.subarray(0, this.used) as T;
    const all = new this.Type(this.full.length * BLOCK_LENGTH + this.used);
    this.full.forEach((block, index) => all.set(block, index * BLOCK_LENGTH));
    all.set(this.block.subarray(0, this.used), this.full.length * BLOCK_LENGTH);
    return all;
  }
}
