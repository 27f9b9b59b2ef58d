/**
 * What a batching rule decides for one instance: the sequences whose head items form the batch
 * (undefined marks a slot that sends a null item), a time to look again, or nothing to do.
 */
export type BatchChoice<S> = { readonly take: readonly (S | undefined)[] } | { readonly waitUntil: number } | undefined;
