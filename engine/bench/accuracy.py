"""How faithful a fast path is to our float32 path on the same weights.

Teacher forcing along the float32 greedy continuation: for each prompt, the float32 path
generates `continuation_len` tokens greedily; both paths then score prompt + continuation in
one prefill, and at each position that predicts a continuation token we compare the top-1 token
and KL(float32 || other). Perplexity: exp(mean next-token negative log-likelihood) over
PERPLEXITY_TEXT. llama.cpp's logits (llama-cpp-python, logits_all=True) on the same token ids
give the same figures for llama.cpp against our float32 path.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass

import torch

from engine.attention import make_attention_metadata, positions_for
from engine.loader import LoadedModel

# 20 prompts: English prose and chat, code, Chinese, Japanese, emoji.
ACCURACY_PROMPTS = [
    "The capital of France is",
    "Once upon a time, in a small village by the sea, there lived",
    "The three laws of thermodynamics state that",
    "Here is a short recipe for pancakes:",
    "<|im_start|>user\nWhat is the speed of light?<|im_end|>\n<|im_start|>assistant\n",
    "<|im_start|>user\nGive me three tips for learning to play the guitar.<|im_end|>\n<|im_start|>assistant\n",
    "The stock market fell sharply on Monday after",
    "def fibonacci(n):\n    if n < 2:\n        return n\n",
    "import numpy as np\n\ndef softmax(x):\n",
    "SELECT name, COUNT(*) FROM orders\n",
    "function debounce(fn, ms) {\n",
    "#include <stdio.h>\n\nint main(void) {\n",
    "中国的首都是",
    "请用一句话介绍一下人工智能。",
    "长城是",
    "日本の首都は",
    "こんにちは、今日は",
    "富士山は",
    "I love 🍕 and 🍣 because",
    "Weather report: ☀️ in the morning, 🌧️ in the afternoon, and",
]

# A text of our own for perplexity (English prose, a little code and numbers).
PERPLEXITY_TEXT = """\
The library opened at nine, but the queue had started long before. Students with laptops,
retired teachers with crossword books and a man carrying a box of seed catalogues waited under
the awning while the rain eased. When the doors finally slid apart, everyone moved at once,
politely, towards the reading room on the first floor, where the windows face the river.

Maria had come for the maps. The city archive kept the survey sheets from 1891 in wide
drawers, each sheet in a paper sleeve with a pencilled number in the corner. She wanted to
know where the old mill race had run before it was covered over, because the basement of her
house flooded every spring and the neighbours all had a different theory about why.

The archivist listened, nodded, and brought out three drawers. "Start with these," he said.
"The engineers drew everything: drains, wells, even the boundary stones. If the water went
somewhere, they will have marked it."

By noon she had found it. A thin blue line left the river below the bridge, curved behind the
brewery and ran straight under what is now her street. She photographed the sheet, wrote the
reference in her notebook, and stayed another hour reading about the mill itself, which ground
flour for the whole valley until a fire closed it in 1923.

def moving_average(values, window):
    total = sum(values[:window])
    result = [total / window]
    for i in range(window, len(values)):
        total += values[i] - values[i - window]
        result.append(total / window)
    return result
"""


@dataclass
class Agreement:
    """Teacher-forced comparison of one path against float32."""

    positions: int
    top1_agreement: float  # fraction of positions whose argmax equals float32's
    mean_kl: float         # mean KL(float32 || this path), nats
    max_kl: float


def full_logits(loaded: LoadedModel, token_ids: list[int], block_size: int = 16) -> torch.Tensor:
    """float32 logits [len(token_ids), vocab] of one prefill over a fresh KV pool."""
    c = loaded.config
    n = len(token_ids)
    num_blocks = -(-n // block_size)
    kv = [torch.zeros(2, num_blocks, block_size, c.num_key_value_heads, c.head_dim)
          for _ in range(c.num_hidden_layers)]
    meta = make_attention_metadata([n], [n], [list(range(num_blocks))], block_size)
    hidden = loaded.model(torch.tensor(token_ids, dtype=torch.int64), positions_for([n], [n]), kv, meta)
    return loaded.model.compute_logits(hidden)


def greedy_continuations(reference: LoadedModel, prompts: list[list[int]], length: int) -> list[list[int]]:
    """The float32 path's greedy continuation of each prompt, `length` tokens (EOS ignored)."""
    from engine.config import EngineConfig
    from engine.llm_engine import LLMEngine
    from engine.sampling_params import SamplingParams

    longest = max(len(p) for p in prompts) + length
    engine = LLMEngine(reference, EngineConfig(num_kv_blocks=len(prompts) * (-(-longest // 16) + 1),
                                               max_model_len=longest + 16))
    outs = engine.generate(prompts, SamplingParams(max_tokens=length, temperature=0.0, ignore_eos=True))
    return [list(o.new_token_ids) for o in outs]


def compare(reference: torch.Tensor, other: torch.Tensor) -> tuple[int, float, float]:
    """(agreeing positions, summed KL(ref || other), max KL) over rows of two logit matrices."""
    log_p = torch.log_softmax(reference.double(), -1)
    log_q = torch.log_softmax(other.double(), -1)
    kl = (log_p.exp() * (log_p - log_q)).sum(-1)
    agree = int((reference.argmax(-1) == other.argmax(-1)).sum())
    return agree, float(kl.sum()), float(kl.max())


def agreement(reference_logits: Callable[[list[int]], torch.Tensor],
              other_logits: Callable[[list[int]], torch.Tensor],
              sequences: list[tuple[list[int], list[int]]]) -> Agreement:
    """Compare two scorers over (prompt, continuation) pairs at the continuation's positions."""
    agree = positions = 0
    kl_sum = kl_max = 0.0
    for prompt, continuation in sequences:
        ids = prompt + continuation
        rows = slice(len(prompt) - 1, len(ids) - 1)  # positions predicting the continuation
        a, s, m = compare(reference_logits(ids)[rows], other_logits(ids)[rows])
        agree, kl_sum, kl_max = agree + a, kl_sum + s, max(kl_max, m)
        positions += len(continuation)
    return Agreement(positions, agree / positions, kl_sum / positions, kl_max)


def perplexity(logits_fn: Callable[[list[int]], torch.Tensor], token_ids: list[int]) -> float:
    """exp(mean negative log-likelihood of each next token) of one text."""
    logits = logits_fn(token_ids)[:-1].double()
    nll = torch.nn.functional.cross_entropy(logits, torch.tensor(token_ids[1:]), reduction="mean")
    return math.exp(float(nll))


def llama_cpp_scorer(gguf_path: str, n_ctx: int = 2048) -> Callable[[list[int]], torch.Tensor]:
    """llama.cpp's logits for every position (raises ImportError without llama_cpp)."""
    import llama_cpp

    llm = llama_cpp.Llama(model_path=gguf_path, n_ctx=n_ctx, logits_all=True, verbose=False)

    def score(ids: list[int]) -> torch.Tensor:
        llm.reset()
        llm.eval(ids)
        return torch.from_numpy(llm.scores[: len(ids)].copy()).float()
    return score


def accuracy_report(reference: LoadedModel, fast: LoadedModel, continuation_len: int = 64,
                    extra: dict[str, Callable[[list[int]], torch.Tensor]] | None = None) -> dict:
    """{"positions", "ours": {...}, "<name>": {...}} for the fast path and each extra scorer:
    top1_agreement, mean_kl, max_kl, perplexity, perplexity_ratio (to float32)."""
    tok = reference.tokenizer
    prompts = [tok.encode(p) for p in ACCURACY_PROMPTS]
    continuations = greedy_continuations(reference, prompts, continuation_len)
    sequences = list(zip(prompts, continuations))
    ref = (lambda ids: full_logits(reference, ids))
    text_ids = tok.encode(PERPLEXITY_TEXT)
    ref_ppl = perplexity(ref, text_ids)
    scorers = {"ours": (lambda ids: full_logits(fast, ids)), **(extra or {})}
    report: dict = {"prompts": len(prompts), "continuation_len": continuation_len,
                    "float32_perplexity": ref_ppl, "perplexity_tokens": len(text_ids)}
    for name, fn in scorers.items():
        ppl = perplexity(fn, text_ids)
        report[name] = {**asdict(agreement(ref, fn, sequences)), "perplexity": ppl,
                        "perplexity_ratio": ppl / ref_ppl}
    return report
