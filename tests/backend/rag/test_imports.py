from __future__ import annotations

import subprocess
import sys


def test_importing_the_library_loads_no_torch():
    code = (
        "import sys, backend.rag, backend.rag.evaluate, backend.rag.bench\n"
        "heavy = [m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules]\n"
        "print(heavy)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_the_real_embedder_loads_offline_from_the_wheel(tmp_path):
    # No HF_HUB_OFFLINE and an empty cache: the model must come from the installed package.
    code = (
        "from backend.rag import SentenceTransformerEmbedder\n"
        "e = SentenceTransformerEmbedder()\n"
        "v = e.embed(['a cat sat', 'a cat sat', 'stock market crash'])\n"
        "print(v.shape, v.dtype, round(float(v[0] @ v[1]), 4), float(v[0] @ v[2]) < 0.5, e.count_tokens('hello world'))\n"
    )
    env = {"HF_HOME": str(tmp_path), "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "(3, 384) float32 1.0 True 2"
