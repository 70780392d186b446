"""How the real model does in agent runs, per policy (docs/BENCHMARKS.md, "Agent runs with the
real model").

    .venv/bin/python scripts/agent_policy_eval.py --policy one_call [--max-tokens 200] [--set calc]

The product's loop (backend.agent.runs.AgentRunner) with the deployment's read-only tools
(search_documents, read_passage, calculator, current_time; the real embedder), temperature 0
(--temperature, --seed to sample),
on 33 questions: 8 arithmetic, 5 about one short document the user uploaded, 5 needing that
document and arithmetic, 6 needing a second document ("held_out", written before the grounded
choice of an expression was built) and arithmetic, 2 about the time, 7 needing no tool; --extra
adds a set from a file (the blind sets of docs/BENCHMARKS.md: "extra", document and arithmetic,
"extra_lookup", a document's fact asked with a number in the question, no arithmetic, and
"extra_chat", messages needing no tool that hold numbers). A question counts as answered when
the run ends "done", the answer does not repeat a <tool_response> block and holds the expected
text (digits compared without thousands separators), and every tool it needs (arithmetic:
calculator; document: search_documents; chain, held_out, extra: both; time: current_time) was called with an "ok"
result; a question needing no tool counts only when no tool was called. Also counted: whether
the run called exactly the tools the question needs ("routed"). One JSON line per question,
then the counts.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import sys
import tempfile
import time
from decimal import Decimal
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from backend.agent.budget import Budget  # noqa: E402
from backend.agent.records import RunRecords  # noqa: E402
from backend.agent.runs import POLICIES, AgentRunner  # noqa: E402
from backend.agent.tools.registry import ToolRegistry  # noqa: E402
from backend.db import create_db_engine, make_session_factory, run_migrations  # noqa: E402
from backend.engine_adapter import create_generator  # noqa: E402
from backend.generator import ChatMessage, GenerationParams  # noqa: E402
from backend.models import Conversation, Message, User, new_id, utcnow  # noqa: E402
from backend.rag import DocumentService, RagSettings, Retriever, SentenceTransformerEmbedder  # noqa: E402

DOCUMENT = """The Halvorsen Bridge

The Halvorsen Bridge crosses the Varne river at the town of Eskholm. Construction began in 1981 and the bridge opened to traffic on 14 May 1987.

The bridge is 2,340 metres long and its main span measures 612 metres. It carries four lanes of road traffic and a cycle path.

The bridge was designed by the engineer Ingrid Solberg. Its two towers are 148 metres tall and are painted dark green.

About 31,000 vehicles cross the bridge every day. The toll was removed in 2004.
"""
# A second document and questions written before the grounded choice of an expression was built,
# and never used to tune it (the "held-out" rows of docs/BENCHMARKS.md).
HELD_OUT_DOCUMENT = """The Lindqvist Observatory

The Lindqvist Observatory stands on Mount Teller, 2,870 metres above sea level. It was opened in 1962 by the
university of Orrefors.

Its main telescope has a mirror 3.6 metres wide. The dome that covers it weighs 310 tonnes and turns once in
four minutes.

The observatory has a staff of 42 people. About 1,200 visitors come every month during the summer season.
"""
QUESTIONS = {
    "calc": [("What is 12 * 34?", "408"), ("What is 1234 * 5678?", "7006652"), ("Compute 987 + 654.", "1641"),
             ("What is 15% of 240?", "36"), ("What is 2 to the power of 10?", "1024"), ("What is 1000 - 357?", "643"),
             ("What is 144 divided by 12?", "12"), ("What is (17 + 5) * 3?", "66")],
    # A number from the document, then arithmetic on it: search_documents, then calculator.
    "chain": [("How long is the Halvorsen Bridge in metres, multiplied by 2?", "4680"),
              ("If I cross the Halvorsen Bridge 3 times, how many metres do I travel in total?", "7020"),
              ("How many vehicles cross the Halvorsen Bridge in a week? Multiply the daily number by 7.", "217000"),
              ("What is the height of one tower of the Halvorsen Bridge times 2?", "296"),
              ("How many years after construction began did the Halvorsen Bridge open? Subtract 1981 from the "
               "opening year.", "6")],
    # Held out: the same kind of question, about the second document.
    "held_out": [("How much does the dome of the Lindqvist Observatory weigh? Give me that weight times 4.", "1240"),
                 ("How many visitors come to the Lindqvist Observatory in a year if the monthly number is multiplied "
                  "by 12?", "14400"),
                 ("How many years had the Lindqvist Observatory been open in 2020? Subtract the opening year from "
                  "2020.", "58"),
                 ("If every staff member of the Lindqvist Observatory works 40 hours a week, how many hours is that "
                  "in total?", "1680"),
                 ("What is the altitude of the Lindqvist Observatory in metres plus 130?", "3000"),
                 ("How wide is the main mirror of the Lindqvist Observatory in centimetres? Multiply its width in "
                  "metres by 100.", "360")],
    "time": [("What time is it?", None), ("What day of the week is it today?", None)],
    "doc": [("How long is the Halvorsen Bridge?", "2340"), ("Who designed the Halvorsen Bridge?", "Solberg"),
            ("When did the Halvorsen Bridge open?", "1987"), ("How tall are the towers of the Halvorsen Bridge?", "148"),
            ("How many vehicles cross the Halvorsen Bridge every day?", "31000")],
    "none": [("Hello! How are you?", None), ("Write a haiku about the sea.", None),
             ("What is the capital of France?", "Paris"), ("Translate 'thank you' into Spanish.", "gracias"),
             ("Tell me a short joke.", None), ("Give me three tips for sleeping better.", None),
             ("Write a short poem about time.", None)],
}
NEEDED_TOOLS = {"calc": ("calculator",), "doc": ("search_documents",), "chain": ("search_documents", "calculator"),
                "held_out": ("search_documents", "calculator"),
                "time": ("current_time",), "none": ()}


# The result a program-written calculation states ("That comes to £64.80: (18 * 4) * ... = 64.80,
# from your documents [2]." and its workings): the want is looked for there alone, not among the
# figures of its expression or workings (a want "18" is no answer for "That comes to 72: 18 * 4").
_STATED = re.compile(r"\s*That comes to ([^\s:]+):")


# An amount as a want or a stated result writes it: "667.00", "$667", "A$1,003.75".
_AMOUNT = re.compile(r"[^\d.,]{0,3}(\d[\d,]*(?:\.\d+)?)\.?")


def _same_amount(want: str, stated: str) -> bool:
    """Whether the want and the stated result are one amount by value ("667.00" and "$667")."""
    a, b = _AMOUNT.fullmatch(want.strip()), _AMOUNT.fullmatch(stated.strip())
    return a is not None and b is not None and Decimal(a.group(1).replace(",", "")) == Decimal(b.group(1).replace(",", ""))


def answered(kind: str, want: str | None, status: str, text: str, calls: list[tuple[str, str]]) -> bool:
    if status != "done" or "tool_response" in text:
        return False
    stated = _STATED.match(text)
    if stated is not None:
        text = stated.group(1)
        if want is not None and _AMOUNT.fullmatch(want.strip()) and not _same_amount(want, text):
            return False  # a stated amount is the want by value ("$1440" is no answer "40")
    if want is not None and not _same_amount(want, text) and want.replace(",", "").lower() not in text.replace(",", "").lower():
        return False
    if kind in ("none", "extra_chat"):
        return not calls  # no tool for a question that needs none
    return all((tool, "ok") in calls for tool in NEEDED_TOOLS[kind])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--policy", choices=POLICIES, default="planned")
    parser.add_argument("--max-tokens", type=int, default=200, help="per model step")
    parser.add_argument("--set", choices=sorted(QUESTIONS) + ["extra", "extra_lookup", "extra_chat"], action="append", help="question sets (default: all)")
    parser.add_argument("--temperature", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=None, help="sampling seed (with --temperature > 0)")
    parser.add_argument("--frequency-penalty", type=float, default=0.0,
                        help="the chat's frequency penalty (the product's default is 0.3; 0 as measured before it)")
    parser.add_argument("--extra", type=Path, help='a JSON file {"documents": [{"name", "text"}], "questions": '
                        '[{"question", "want"}]}: its documents are uploaded too, its questions are the set '
                        '"extra" (each needs a document and arithmetic)')
    args = parser.parse_args()
    uploads = [("halvorsen.txt", DOCUMENT), ("lindqvist.txt", HELD_OUT_DOCUMENT)]
    if args.extra is not None:
        extra = json.loads(args.extra.read_text())
        uploads += [(d["name"], d["text"]) for d in extra["documents"]]
        QUESTIONS["extra"] = [(q["question"], q["want"]) for q in extra["questions"]]
        NEEDED_TOOLS["extra"] = ("search_documents", "calculator")
        # Questions answered by a fact of a document, no arithmetic, though they hold a number.
        QUESTIONS["extra_lookup"] = [(q["question"], q["want"]) for q in extra.get("lookups", [])]
        NEEDED_TOOLS["extra_lookup"] = ("search_documents",)
        # Chat that needs no tool, though it holds numbers ("Give me 5 tips ...").
        QUESTIONS["extra_chat"] = [(q, None) for q in extra.get("chats", [])]
        NEEDED_TOOLS["extra_chat"] = ()

    url = f"sqlite:///{tempfile.mkdtemp()}/agent_eval.sqlite"
    run_migrations(url)
    sessions = make_session_factory(create_db_engine(url))
    with sessions() as db:
        user = User(id=new_id(), username="ann", username_key="ann", password_hash="x", role="user")
        db.add(user)
        db.commit()
        user_id = user.id
    embedder, rag = SentenceTransformerEmbedder(), RagSettings()
    documents = DocumentService(sessions, embedder, rag)
    for name, text in uploads:
        view = documents.upload(user_id, name, text.encode())
        documents.ingest(view.id, text.encode())
    registry = ToolRegistry(documents=documents, retriever=Retriever(sessions, embedder, rag), notes=None,
                            session_factory=sessions)
    specs = registry.specs()
    records = RunRecords(sessions)
    generator = create_generator(None)
    generator.start()
    counts: dict[str, list[int]] = {}
    try:
        for kind in args.set or list(QUESTIONS):
            for question, want in QUESTIONS[kind]:
                with sessions() as db:
                    conversation = Conversation(id=new_id(), user_id=user_id, use_tools=True)
                    db.add(conversation)
                    db.flush()
                    now = utcnow()
                    reply = Message(id=new_id(), conversation_id=conversation.id, user_id=user_id, position=1,
                                    role="assistant", status="streaming", created_at=now, updated_at=now)
                    db.add(reply)
                    db.commit()
                    ids = (conversation.id, reply.id)
                runner = AgentRunner(generator, specs, {s.name for s in specs}, records,
                                     Budget(max_steps=6, max_tool_calls=3, max_tokens=16_000, max_wall_s=600),
                                     policy=args.policy, user_text=question)
                t0 = time.monotonic()
                result = asyncio.run(runner.run(
                    conversation_id=ids[0], user_id=user_id, message_id=ids[1],
                    messages=[ChatMessage("user", question)],
                    params=GenerationParams(max_tokens=args.max_tokens, temperature=args.temperature, seed=args.seed,
                                            frequency_penalty=args.frequency_penalty), stop=asyncio.Event()))
                calls = [(c.tool, c.status) for c in records.calls(result.run_id)]
                ok = answered(kind, want, result.status, result.text, calls)
                routed = {tool for tool, _ in calls} == set(NEEDED_TOOLS[kind])
                counts.setdefault(kind, [0, 0, 0])
                counts[kind][0] += ok
                counts[kind][1] += routed
                counts[kind][2] += 1
                print(json.dumps({"set": kind, "question": question, "ok": ok, "routed": routed, "status": result.status,
                                  "calls": [[c.tool, c.arguments, c.status] for c in records.calls(result.run_id)],
                                  "answer": result.text[:200], "s": round(time.monotonic() - t0, 1)}), flush=True)
    finally:
        generator.shutdown()
    print(f"policy {args.policy}, temperature {args.temperature}, answered (the right tools called): "
          + ", ".join(f"{k} {a}/{n} ({r}/{n})" for k, (a, r, n) in counts.items()))


if __name__ == "__main__":
    main()
