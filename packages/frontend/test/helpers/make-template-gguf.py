"""Writes a GGUF file holding only tokenizer metadata: a vocabulary, BOS and EOS ids, and a chat
template (no tensors): what the OpenAI frontend reads of a llama.cpp model.
Usage: make-template-gguf.py <out.gguf> <chat template>"""
import sys

from gguf import GGUFWriter

path, template = sys.argv[1], sys.argv[2]
writer = GGUFWriter(path, "llama")
writer.add_tokenizer_model("llama")
writer.add_token_list(["<unk>", "<s>", "</s>", "hello"])
writer.add_bos_token_id(1)
writer.add_eos_token_id(2)
writer.add_chat_template(template)
writer.write_header_to_file()
writer.write_kv_data_to_file()
writer.write_tensors_to_file()
writer.close()
