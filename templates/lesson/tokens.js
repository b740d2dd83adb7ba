
  // ---- count_tokens.py: token/s -> characters/s at the Chinese paragraph's chars per token ---
  function tokenReadouts(s) {
    const T = DATA.tokens, out = {};
    if (!T || s.tok_s === undefined) return out;
    for (const row of T.rows) {  // row.chars counts code points, as Python's len() does
      if (row.passage_id === T.chars_passage) out[`chars_per_s.${row.tokenizer_id}`] = s.tok_s * row.chars / row.tokens;
    }
    return out;
  }
