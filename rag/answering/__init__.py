"""The answer pipeline's stages, each a small component over one AnswerContext (context.py):

rewrite → retrieve → fuse → rerank → feedback look-up → pool (the demotions applied to every draw) →
parts → judge (the question analysed once; evidence, near miss, gate and the quotes:
rag.judging.judge; refuse words a refusal) → generate or extract → cite.

pipeline.py runs them over one answer and states the threading rule every stage follows: a blocking stage runs in
the answer's worker thread (worker.py), only model calls and pure text handling on the event loop. A stage is
named for what it does (rewrite, retrieve, fuse, rerank, reorder, pool, parts, judge, refuse, generate, extract,
cite); what it uses is named for what it is: candidates.py (the retrieval side, retrieve to the feedback look-up,
with candidate_cache.py), pools.py (which passages an answer is made from), rewriter.py (the small model's
query rewrite), prompt.py (the answer model's prompt), refusal.py (the honest "not in the knowledge base"),
framing.py (what a chat message asks, without its courtesies), citations.py (the answer's markers checked and
mapped to their passages)."""
