/** Triton's request flags for sequences (TRITONSERVER_REQUEST_FLAG_SEQUENCE_START / _END), as frames carry them. */
export const SEQUENCE_START = 1;
export const SEQUENCE_END = 2;
