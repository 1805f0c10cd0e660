"""The answer pipeline's stages, each a small component over one AnswerContext (context.py):

rewrite → retrieve → fuse → rerank → feedback look-up → pool (the demotions applied to every draw) →
parts → judge (the question analysed once; evidence, near miss, gate and the quotes:
rag.judging.judge; refuse words a refusal) → generate or extract → cite.

rag.candidates runs the retrieval side (retrieve to the feedback look-up), rag.pipeline the whole answer — and
states the threading rule every stage follows: a blocking stage runs in the answer's worker thread
(worker.py), only model calls and pure text handling on the event loop."""
