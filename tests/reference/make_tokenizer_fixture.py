#!/usr/bin/env python3
"""Writes tests/fixtures/tokenizer/gpt2_reference.json: texts -> GPT-2 token ids from tiktoken.

Run with the project's venv (it has tiktoken):

    ~/.cache/gaugelab/venv/bin/python tests/reference/make_tokenizer_fixture.py [RANKS] [OUT]

RANKS defaults to $GAUGELAB_ASSETS/gpt2.tiktoken (else ~/.cache/gaugelab/assets/gpt2.tiktoken);
tiktoken is built from that same file, so no network is needed. The Catch2 tests in tests/data
compare the C++ tokenizer with these ids token for token.

Two kinds of case:
  * "cases": Unicode texts, encoded by tiktoken itself (encode with allowed_special="all", or
    encode_ordinary for the "as_text" cases).
  * "byte_cases": byte strings that are not valid UTF-8. tiktoken's public API only takes str, so
    these follow the rule the C++ tokenizer documents: decode with errors="surrogateescape", split
    with the same pattern through the `regex` module (tiktoken's own Python dependency), and merge
    each piece with tiktoken's BPE (`_encode_single_piece`). The script first checks that this route
    reproduces tiktoken exactly on every valid text, so the two agree wherever both are defined.
"""
import hashlib
import json
import os
import random
import sys

import regex
import tiktoken
from tiktoken.load import load_tiktoken_bpe

PAT = r"""'s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+"""
EOT = "<|endoftext|>"


def default_ranks():
    assets = os.environ.get("GAUGELAB_ASSETS") or os.path.join(
        os.environ.get("GAUGELAB_CACHE") or os.path.expanduser("~/.cache/gaugelab"), "assets")
    return os.path.join(assets, "gpt2.tiktoken")


def random_paragraph(seed, n_words):
    """A long mixed-script paragraph: words, numbers, punctuation and odd whitespace."""
    rng = random.Random(seed)
    words = ("the of and to in is was that for it with as his on be at by had are but from "
             "not have all were when we there can an your which their said if do will each "
             "about how up out them then she many some so these would other into has more her "
             "two like him see time could no make than first been its who now people my made "
             "over did down only way find use may water long little very after words called "
             "just where most know get through back much before go good new write our used me "
             "man too any day same right look think also around another came come work three "
             "word must because does part even place well such here take why help put different "
             "away again off went old number great tell men say small every found still between "
             "Zürich naïve café Ελλάδα Москва 東京 北京 서울 القاهرة मुंबई ท่าอากาศยาน "
             "don't it's you're we'll I'd they've Mr. Dr. e.g. i.e. U.S.A. 3.14 1,024 42 "
             "2023 7th 0x7f $19.99 50% #hashtag @user https://example.org/a?b=c&d=e").split()
    seps = [" "] * 30 + [", ", ". ", "; ", ": ", "! ", "? ", " - ", " — ", "\n", "\n\n", "  ", "\t",
                         " (", ") ", " \"", "\" ", " '", "' ", "\u00a0", "\u2009", "\r\n"]
    out = []
    for _ in range(n_words):
        w = rng.choice(words)
        if rng.random() < 0.1:
            w = w.capitalize()
        if rng.random() < 0.03:
            w = w.upper()
        out.append(w)
        out.append(rng.choice(seps))
    return "".join(out)


def texts():
    """(name, text, mode) triples; mode "allowed" or "as_text"."""
    t = [
        ("hello_world", "Hello world"),
        ("empty", ""),
        ("single_space", " "),
        ("single_letter", "a"),
        ("sentence", "The quick brown fox jumps over the lazy dog."),
        ("contractions", "It's here, you're there, they've gone, I'm fine, we'll see, he'd go, can't won't."),
        ("contractions_upper", "IT'S HERE, YOU'RE THERE, THEY'VE GONE, I'M FINE, WE'LL SEE, HE'D GO, 'LL 'S 'RE"),
        ("apostrophe_runs", "''''s 's's's ' 's 'x '' \"quoted\" ‘curly’ “double”"),
        ("leading_spaces", "    four leading spaces"),
        ("trailing_spaces", "trailing spaces    "),
        ("inner_spaces", "many     spaces   between  words"),
        ("crlf", "line one\r\nline two\r\n\r\nline four\r\n"),
        ("newline_runs", "a\n\nb\n\n\nc\n\n\n\n\nd\n"),
        ("only_newlines", "\n\n\n\n\n\n"),
        ("whitespace_mix", "x \t \n \r\n\t\t  y \n z\t"),
        ("tabs", "col1\tcol2\t\tcol4\n\tindented\n\t\tdouble"),
        ("nbsp_thin", "10\u00a0km and 5\u2009000 m\u00a0\u00a0double nbsp\u202fnarrow"),
        ("unicode_spaces", "a\u3000b\u2000c\u200ad\u2028e\u2029f\u205fg\u1680h"),
        ("not_spaces", "a\u180eb \u180ec\u200bd\u200ce\u200df\ufeffg\x1ch \x1di\x85j \x85k"),
        ("control_chars", "nul\x00bell\x07esc\x1b[31mred\x1b[0m del\x7f"),
        ("cjk_chinese", "我爱自然语言处理。今天天气很好，我们去公园散步吧！"),
        ("cjk_japanese", "東京は日本の首都です。ひらがなとカタカナ、漢字を使います。"),
        ("cjk_korean", "안녕하세요, 세계! 한국어 텍스트를 토큰화합니다."),
        ("arabic", "مرحبا بالعالم، كيف حالك اليوم؟ هذا نص عربي."),
        ("hebrew", "שלום עולם! זהו טקסט בעברית."),
        ("devanagari", "नमस्ते दुनिया। यह हिन्दी का एक वाक्य है।"),
        ("thai", "ภาษาไทยไม่มีช่องว่างระหว่างคำ"),
        ("cyrillic_greek", "Привет, мир! Γειά σου Κόσμε! Ελληνικά και русский."),
        ("accents_nfc", "café naïve résumé Ångström façade Ærøskøbing São Paulo Łódź"),
        ("accents_nfd", "cafe\u0301 nai\u0308ve re\u0301sume\u0301"),
        ("emoji_simple", "I love it 😀😃😄 👍 ❤️ ✨"),
        ("emoji_skin_tone", "👍🏽 👋🏿 🧑🏻‍💻"),
        ("emoji_zwj_family", "family: 👨‍👩‍👧‍👦 couple: 👩‍❤️‍👨"),
        ("emoji_flags", "flags 🇺🇸🇯🇵🇩🇪 🏳️‍🌈 🏴‍☠️ 🏴󠁧󠁢󠁳󠁣󠁴󠁿"),
        ("math_symbols", "∑ᵢ xᵢ² ≤ ∫₀^∞ f(x) dx, α+β=γ, √2 ≈ 1.414, ∀ε>0 ∃δ"),
        ("numbers", "3.14159 1,000,000 2024-05-20 0x1F 1e-9 -42 +7 007 12:30:45"),
        ("number_scripts", "Arabic-Indic ١٢٣ Devanagari ४५६ fullwidth １２３ fractions ½ ¾ roman Ⅻ super ²³"),
        ("long_digits", "1234567890" * 30),
        ("long_word", "pneumonoultramicroscopicsilicovolcanoconiosis supercalifragilisticexpialidocious"),
        ("repeated_letter", "a" * 300),
        ("repeated_pair", "ab" * 200),
        ("long_punctuation", "=" * 80 + "\n" + "-*" * 40 + "\n" + "!?" * 30),
        ("long_space_run", "x" + " " * 200 + "y"),
        ("long_newline_run", "x" + "\n" * 100 + "y"),
        ("base64_blob", "data:image/png;base64,iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="),
        ("url_email", "See https://example.com/path?q=1&x=y#frag or mail someone@example.org."),
        ("python_code", "def f(x):\n    if x > 0:\n        return x ** 2  # square\n    else:\n\treturn -x\n\n\nprint(f(3))\n"),
        ("c_code", "int main(void) {\n  for (int i = 0; i < 10; ++i) {\n    printf(\"%d\\n\", i);\n  }\n  return 0;\n}\n"),
        ("json_text", '{"key": [1, 2.5, "three"], "nested": {"a": null, "b": true}}'),
        ("markdown", "# Title\n\n- item one\n- item two\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n```\ncode\n```\n"),
        ("mixed_scripts_no_space", "abc123def٤٥٦ghiЖЗИ東京xyz"),
        ("supplementary_planes", "\U00010000 \U0001D400\U0001D401 \U00020000 \U000E0041 \U0010FFFD"),
        ("eot_allowed", "first document" + EOT + "second document"),
        ("eot_as_text", "first document" + EOT + "second document", "as_text"),
        ("eot_alone_allowed", EOT),
        ("eot_spaces_allowed", "end. " + EOT + "\n\nStart " + EOT + EOT + " tail"),
        ("eot_spaces_as_text", "end. " + EOT + "\n\nStart " + EOT + EOT + " tail", "as_text"),
        ("eot_partial", "<|endoftext| <|endoftext <endoftext|> |endoftext|>"),
        ("paragraph_random", random_paragraph(1, 1500)),
        ("paragraph_random_2", random_paragraph(2, 400)),
    ]
    return [(x[0], x[1], x[2] if len(x) > 2 else "allowed") for x in t]


def byte_texts():
    """Byte strings with invalid UTF-8."""
    rng = random.Random(7)
    cases = [
        ("lone_ff", b"\xff"),
        ("latin1_word", b"caf\xe9 au lait, na\xefve"),
        ("truncated_sequence", b"quote \xe2\x80 end"),
        ("truncated_at_end", b"smile \xf0\x9f\x98"),
        ("stray_continuations", b"a\x80\x81\x82b \x80 c"),
        ("overlong_slash", b"path\xc0\xafetc"),
        ("encoded_surrogate", b"x\xed\xa0\x80y"),
        ("above_max", b"\xf4\x90\x80\x80 big"),
        ("invalid_between_spaces", b"  \xff  \xfe\n\n"),
        ("invalid_then_contraction", b"\x80's it\xff'll"),
        ("invalid_after_punct", b"end!\xff\xfe? next"),
        ("digits_invalid", b"12\xff34 5\xfe"),
    ]
    alphabet = [b"a", b"b", b" ", b"\n", b"'", b"s", b"!", b"1", b"\t", b"\xc3\xa9", b"\xe2\x80\x9c",
                b"\xff", b"\xe2", b"\x80", b"\xc3", b"\xf0\x9f", b"\xed\xa0"]
    for i in range(12):
        n = rng.randint(5, 60)
        cases.append(("random_mix_%02d" % i, b"".join(rng.choice(alphabet) for _ in range(n))))
    for i in range(4):
        cases.append(("random_bytes_%02d" % i, bytes(rng.randrange(256) for _ in range(rng.randint(10, 80)))))
    return cases


def reference_split_encode(enc, data):
    """The documented rule: surrogateescape decode, reference regex, BPE per piece."""
    s = data.decode("utf-8", "surrogateescape")
    out = []
    for piece in regex.findall(PAT, s):
        out.extend(enc._encode_single_piece(piece.encode("utf-8", "surrogateescape")))
    return out


def main():
    ranks_path = sys.argv[1] if len(sys.argv) > 1 else default_ranks()
    here = os.path.dirname(os.path.abspath(__file__))
    out_path = sys.argv[2] if len(sys.argv) > 2 else os.path.join(
        here, "..", "fixtures", "tokenizer", "gpt2_reference.json")
    with open(ranks_path, "rb") as f:
        sha = hashlib.sha256(f.read()).hexdigest()
    enc = tiktoken.Encoding(name="gpt2", pat_str=PAT, mergeable_ranks=load_tiktoken_bpe(ranks_path),
                            special_tokens={EOT: 50256})
    assert enc.encode("Hello world") == [15496, 995]

    cases = []
    for name, text, mode in texts():
        if mode == "allowed":
            ids = enc.encode(text, allowed_special="all")
        else:
            ids = enc.encode_ordinary(text)
        assert enc.decode(ids) == text, name
        if EOT not in text or mode == "as_text":
            assert reference_split_encode(enc, text.encode()) == ids, "regex route differs on " + name
        cases.append({"name": name, "special": mode, "text": text, "tokens": ids})

    byte_cases = []
    for name, data in byte_texts():
        ids = reference_split_encode(enc, data)
        assert enc.decode_bytes(ids) == data, name
        byte_cases.append({"name": name, "hex": data.hex(), "tokens": ids})

    fixture = {
        "generator": "tests/reference/make_tokenizer_fixture.py",
        "tiktoken_version": tiktoken.__version__,
        "ranks_sha256": sha,
        "pattern": PAT,
        "eot": 50256,
        "cases": cases,
        "byte_cases": byte_cases,
    }
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    # One case per line keeps the file small and its diffs readable.
    with open(out_path, "w", encoding="utf-8") as f:
        f.write("{\n")
        for key in ("generator", "tiktoken_version", "ranks_sha256", "pattern", "eot"):
            f.write("%s: %s,\n" % (json.dumps(key), json.dumps(fixture[key], ensure_ascii=False)))
        for key in ("cases", "byte_cases"):
            rows = [json.dumps(c, ensure_ascii=False) for c in fixture[key]]
            f.write("%s: [\n%s\n]%s\n" % (json.dumps(key), ",\n".join(rows), "," if key == "cases" else ""))
        f.write("}\n")
    with open(out_path, encoding="utf-8") as f:
        assert json.load(f) == fixture
    n_tokens = sum(len(c["tokens"]) for c in cases) + sum(len(c["tokens"]) for c in byte_cases)
    print("wrote %s: %d texts, %d byte strings, %d tokens" % (out_path, len(cases), len(byte_cases), n_tokens))


if __name__ == "__main__":
    main()
