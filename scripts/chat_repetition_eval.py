"""How often casual chat replies run to the token limit repeating themselves, by frequency penalty.

    .venv/bin/python scripts/chat_repetition_eval.py [--seeds 11 12 13 14] [--max-tokens 400]

Ten casual messages ("hi, thanks!", "tell me a joke", ...) through the chat template with its default
system prompt, the packaged SmolLM2-135M Q4_1, temperature 0.7, top-p 1, each seed once, with no
penalty and with frequency penalties of 0.3 and 0.5 (OpenAI semantics: the engine's sampler). For
each setting: how many replies reached max_tokens, how many repeat a run of 25 or more characters
three times in a row, and the tokens generated. Prints one line per setting.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from engine.config import EngineConfig  # noqa: E402
from engine.llm_engine import LLMEngine  # noqa: E402
from engine.sampling_params import SamplingParams  # noqa: E402

MESSAGES = ("hi, thanks!", "thanks a lot, that was helpful", "ok cool", "what's the capital of France?",
            "tell me a joke", "good morning!", "thank you so much!", "you're great", "bye for now", "hello there")
# A run of at least 25 characters said three times in a row.
LOOP = re.compile(r"(.{25,}?)\1\1", re.DOTALL)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[11, 12, 13, 14])
    parser.add_argument("--max-tokens", type=int, default=400)
    args = parser.parse_args()
    llm = LLMEngine.from_config(EngineConfig(model=None))
    prompts = [llm.chat_template.render([{"role": "user", "content": m}]) for m in MESSAGES]
    for penalty in (0.0, 0.3, 0.5):
        cut = looping = tokens = total = 0
        for seed in args.seeds:
            params = SamplingParams(temperature=0.7, top_p=1.0, max_tokens=args.max_tokens, seed=seed,
                                    frequency_penalty=penalty)
            for out in llm.generate(prompts, [params] * len(prompts)):
                total += 1
                tokens += len(out.new_token_ids)
                cut += len(out.new_token_ids) >= args.max_tokens
                looping += LOOP.search(out.text) is not None
        print(f"frequency_penalty {penalty}: {cut}/{total} at the token limit, {looping}/{total} looping, "
              f"{tokens} tokens")


if __name__ == "__main__":
    main()
