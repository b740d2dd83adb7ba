"""The test corpus for the Qwen3.5 conversion proof: at least 200 strings, built deterministically. Pure."""
from __future__ import annotations

import itertools

CHINESE = ["小明把苹果给了小王。", "推理服务的首字时间取决于排队和预填充。", "它们互相牵制:批次越大,总产出越高。",
           "「引号」『书名』《标题》——破折号……省略号", "繁體字與簡體字混排測試", "𠀀𠀁𪚥 生僻字", "１２３４５ 全角数字",
           "今天气温 23.5°C,湿度 67%。"]
ENGLISH = ["Hello world", "It's the user's turn; they'll see it.", "DON'T SHOUT, WE'RE LISTENING", "tokens/s ≠ chars/s",
           "Time-to-first-token (TTFT) and time-per-output-token (TPOT).", "naïve café résumé", "x" * 300,
           "The quick brown fox jumps over the lazy dog 1234567890 times."]
CODE = ["def f(x):\n    return x ** 2\n", "for (int i = 0; i < n; ++i) { sum += a[i]; }", "SELECT * FROM t WHERE a<>b;",
        "<div class=\"x\">&amp;</div>", "λx.λy.x", "#include <stdio.h>\r\nint main(){return 0;}\r\n",
        "    indented\n\tTabbed\n\n\n", "a_b-c.d/e\\f|g"]
EMOJI = ["🙂", "👍🏽", "👨‍👩‍👧‍👦", "🇨🇳🇺🇸", "❤️‍🔥", "emoji 😀 in 文本 中", "🤖🤖🤖"]
SPACES = ["", " ", "  ", "\n", "\r\n", "\t", " \n ", "trailing   ", "   leading", "a\u00a0b", "全角\u3000空格",
          "many\n\n\n\nnewlines", "e\u0301", "\u0915\u093f\u0924\u093e\u092c", "مرحبا بالعالم", "こんにちは、世界",
          "안녕하세요 세계", "Ωμέγα", "Привет, мир"]
SPECIAL = ["<|im_start|>user\n你好<|im_end|>", "<think>嗯</think>答案", "<|endoftext|>"]


def corpus() -> list[str]:
    singles = CHINESE + ENGLISH + CODE + EMOJI + SPACES + SPECIAL
    pairs = [a + b for a, b in itertools.product(CHINESE + ENGLISH, EMOJI[:3] + SPACES[:8] + CODE[:2])]
    mixed = [" ".join(t) for t in zip(CHINESE, ENGLISH, CODE, strict=False)]
    out, seen = [], set()
    for s in singles + pairs + mixed:
        if s not in seen:
            seen.add(s)
            out.append(s)
    return out
