/** The shape a tensor has in the model: the reshape when given, else dims. */
export function modelSideDims(tensor: { readonly dims: number[]; readonly reshape?: { readonly shape: number[] } }): number[] {
  return tensor.reshape?.shape ?? tensor.dims;
}
