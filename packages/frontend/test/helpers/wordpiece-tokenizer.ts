/**
 * A BERT-style tokenizer.json (lower-casing, WordPiece, [CLS] … [SEP]) over a small
 * vocabulary, in the Hugging Face format sentence-embedding models ship with.
 */
export const WORDPIECE_VOCAB = ['[PAD]', '[UNK]', '[CLS]', '[SEP]', 'the', 'cat', 'sat', 'on', 'mat', 'dog', '##s', 'a'];

const special = (content: string) => ({ id: WORDPIECE_VOCAB.indexOf(content), content, single_word: false, lstrip: false, rstrip: false, normalized: false, special: true });
const specialToken = (id: string) => ({ SpecialToken: { id, type_id: 0 } });

export const WORDPIECE_TOKENIZER = {
  version: '1.0',
  truncation: null,
  padding: null,
  added_tokens: ['[PAD]', '[UNK]', '[CLS]', '[SEP]'].map(special),
  normalizer: { type: 'BertNormalizer', clean_text: true, handle_chinese_chars: true, strip_accents: null, lowercase: true },
  pre_tokenizer: { type: 'BertPreTokenizer' },
  post_processor: {
    type: 'TemplateProcessing',
    single: [specialToken('[CLS]'), { Sequence: { id: 'A', type_id: 0 } }, specialToken('[SEP]')],
    pair: [specialToken('[CLS]'), { Sequence: { id: 'A', type_id: 0 } }, specialToken('[SEP]'), { Sequence: { id: 'B', type_id: 1 } }, specialToken('[SEP]')],
    special_tokens: Object.fromEntries(['[CLS]', '[SEP]'].map((token) => [token, { id: token, ids: [WORDPIECE_VOCAB.indexOf(token)], tokens: [token] }])),
  },
  decoder: { type: 'WordPiece', prefix: '##', cleanup: true },
  model: { type: 'WordPiece', unk_token: '[UNK]', continuing_subword_prefix: '##', max_input_chars_per_word: 100, vocab: Object.fromEntries(WORDPIECE_VOCAB.map((token, id) => [token, id])) },
};
