"""Writes a tiny Llama-architecture GGUF with random weights, for tests and benches.

usage: make-tiny-gguf.py OUT.gguf [--seed N] [--embedding N] [--layers N] [--context N]

The vocabulary is SentencePiece-style (tokenizer.ggml.model = "llama"): the control
tokens, the 256 byte-fallback tokens, single characters and a few hundred words, so any
text tokenizes. A chat template sits in tokenizer.chat_template. Weights are drawn
from numpy's generator under the seed, so the same arguments give the same file; the
output rows of the control tokens are zero, so greedy decoding seldom ends on EOS.
"""

import argparse
import string

import numpy as np
from gguf import GGUFWriter, TokenType

WORDS = (
    "the of and to in is it that was for on are as with his they at be this from have or by one had not but what all were "
    "when we there can an your which their said if do will each about how up out them then she many some so these would "
    "other into has more her two like him see time could no make than first been its who now people my made over did down "
    "only way find use may water long little very after words called just where most know get through back much go good "
    "new write our me man too any day same right look think also around another came come work three word must because "
    "does part even place well such here take why things help put years different away again off went old number great "
    "tell men say small every found still between name should home big give air line set own under read last never us left "
    "end along while might next sound below saw something thought both few those always looked show large often together "
    "asked house world going want school important until form food keep children feet land side without boy once animals "
    "life enough took sometimes four head above kind began almost live page got earth need far hand high year mother light "
    "parts country father let night following picture being study second eyes soon times story boys since white days ever "
    "paper hard near sentence better best across during today others sure means knew its try told young miles sun ways "
    "thing whole hear example heard several change answer room sea against top turned learn point city play toward five "
    "using himself usually money seen car morning"
).split()

CHAT_TEMPLATE = (
    "{% for message in messages %}"
    "{{ '<|' + message['role'] + '|>\\n' + message['content'] + '<|end|>\\n' }}"
    "{% endfor %}"
    "{% if add_generation_prompt %}{{ '<|assistant|>\\n' }}{% endif %}"
)


def vocabulary():
    tokens = [("<unk>", TokenType.UNKNOWN), ("<s>", TokenType.CONTROL), ("</s>", TokenType.CONTROL)]
    tokens += [(f"<0x{byte:02X}>", TokenType.BYTE) for byte in range(256)]
    pieces = ["\u2581"] + list(string.ascii_letters + string.digits + string.punctuation)
    pieces += ["\u2581" + c for c in string.ascii_lowercase]
    pieces += sorted({"\u2581" + word for word in WORDS})
    seen = set()
    for piece in pieces:
        if piece not in seen:
            seen.add(piece)
            tokens.append((piece, TokenType.NORMAL))
    return tokens


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--embedding", type=int, default=64)
    parser.add_argument("--layers", type=int, default=2)
    parser.add_argument("--heads", type=int, default=4)
    parser.add_argument("--context", type=int, default=2048)
    parser.add_argument("--f16", action="store_true", help="store the matrices as F16 (norms stay F32)")
    args = parser.parse_args()

    rng = np.random.default_rng(args.seed)
    tokens = vocabulary()
    vocab = len(tokens)
    n_embd, n_head = args.embedding, args.heads
    n_ff = n_embd * 3
    head_dim = n_embd // n_head

    writer = GGUFWriter(args.out, "llama")
    writer.add_name("tritium-tiny-llama")
    writer.add_context_length(args.context)
    writer.add_embedding_length(n_embd)
    writer.add_block_count(args.layers)
    writer.add_feed_forward_length(n_ff)
    writer.add_head_count(n_head)
    writer.add_head_count_kv(n_head)
    writer.add_rope_dimension_count(head_dim)
    writer.add_layer_norm_rms_eps(1e-5)
    writer.add_file_type(1 if args.f16 else 0)  # mostly F16, or all F32

    writer.add_tokenizer_model("llama")
    writer.add_token_list([text for text, _ in tokens])
    # SentencePiece merges by score: longer pieces first.
    writer.add_token_scores([float(len(text)) if kind == TokenType.NORMAL else 0.0 for text, kind in tokens])
    writer.add_token_types([int(kind) for _, kind in tokens])
    writer.add_unk_token_id(0)
    writer.add_bos_token_id(1)
    writer.add_eos_token_id(2)
    writer.add_add_bos_token(True)
    writer.add_add_eos_token(False)
    writer.add_chat_template(CHAT_TEMPLATE)

    matrix_type = np.float16 if args.f16 else np.float32

    def weights(*shape, scale=None):
        scale = scale if scale is not None else 1.0 / np.sqrt(shape[-1])
        return (rng.standard_normal(shape) * scale).astype(np.float32).astype(matrix_type)

    # numpy shapes are (rows, columns) = GGUF's (ne1, ne0) reversed.
    writer.add_tensor("token_embd.weight", weights(vocab, n_embd, scale=1.0))
    for layer in range(args.layers):
        prefix = f"blk.{layer}"
        writer.add_tensor(f"{prefix}.attn_norm.weight", np.ones(n_embd, dtype=np.float32))
        writer.add_tensor(f"{prefix}.attn_q.weight", weights(n_embd, n_embd))
        writer.add_tensor(f"{prefix}.attn_k.weight", weights(n_embd, n_embd))
        writer.add_tensor(f"{prefix}.attn_v.weight", weights(n_embd, n_embd))
        writer.add_tensor(f"{prefix}.attn_output.weight", weights(n_embd, n_embd))
        writer.add_tensor(f"{prefix}.ffn_norm.weight", np.ones(n_embd, dtype=np.float32))
        writer.add_tensor(f"{prefix}.ffn_gate.weight", weights(n_ff, n_embd))
        writer.add_tensor(f"{prefix}.ffn_up.weight", weights(n_ff, n_embd))
        writer.add_tensor(f"{prefix}.ffn_down.weight", weights(n_embd, n_ff))
    writer.add_tensor("output_norm.weight", np.ones(n_embd, dtype=np.float32))
    output = weights(vocab, n_embd, scale=4.0 / np.sqrt(n_embd))
    # Control, unknown and byte tokens never win a greedy step: their logits stay 0.
    output[: 3 + 256] = 0.0
    writer.add_tensor("output.weight", output)

    writer.write_header_to_file()
    writer.write_kv_data_to_file()
    writer.write_tensors_to_file()
    writer.close()


if __name__ == "__main__":
    main()
