"""The offline demo: a long scripted coding-agent session driven through langctx."""
