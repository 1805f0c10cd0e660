"""Milvus collections of the knowledge base: the connection, the chunk schema (dense vector, BM25 over the
indexed text, citation metadata as scalar fields) and the conversion between chunks and rows.

pymilvus is imported here only, and only when a Milvus index is used: `ai-employee --help` stays fast.
"""

from __future__ import annotations

import json
import logging
import os
import unicodedata
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from rag.access import MAX_ID_CHARS, MAX_IDS
from rag.words.lexical import STOP_WORDS
from rag.types import PUBLIC, Chunk, Scope, collection_of

TEXT_MAX = 65_535  # Milvus' VARCHAR limit (bytes)
FOLDER_DEPTH = 64
HNSW_PARAMS = {"M": 32, "efConstruction": 80}  # as the FAISS path (rag/index/dense.py)
HNSW_EF = 128
# Chunk fields a search hit needs to be cited; the vectors stay in Milvus unless asked for.
CHUNK_FIELDS = ["id", "file", "title", "heading_path", "text", "lead", "start", "end", "page", "page_end",
                "doc_version", "doc_date", "url", "collection", "access", "row", "row_end"]
# jieba (the tokenizer Milvus Lite and the server share) with our BM25 stop words, so both backends ignore
# the same function words; punctuation, which jieba keeps as tokens, is dropped too.
_PUNCTUATION = "，。、；：？！“”‘’（）《》【】—…·,.;:?!\"'()[]<>-/"
ANALYZER = {
    "tokenizer": "jieba",
    "filter": ["lowercase", {"type": "stop", "stop_words": sorted(STOP_WORDS | set(_PUNCTUATION))}],
}


# The passages' glosses (rag.words.bilingual.gloss) are our own BM25 tokens already, joined by spaces: Milvus only
# splits them again (Milvus Lite knows no whitespace tokenizer; "standard" splits our tokens nowhere else).
GLOSS_ANALYZER = {"tokenizer": "standard"}


class MilvusUnavailableError(RuntimeError):
    """Milvus cannot be reached or refused the request (the message never carries the token)."""


@dataclass(frozen=True)
class MilvusConfig:
    uri: str  # a local *.db path (Milvus Lite) or http(s)://host:19530
    token: str = ""
    db: str = ""

    def __repr__(self) -> str:  # never the token or credentials in the URI
        return f"MilvusConfig({self.display!r}, db={self.db!r})"

    @property
    def display(self) -> str:
        """The URI without credentials, for messages."""
        parts = urlsplit(self.uri)
        if parts.scheme in ("http", "https", "tcp", "grpc") and parts.hostname:
            port = f":{parts.port}" if parts.port else ""
            return f"{parts.scheme}://{parts.hostname}{port}"
        return self.uri


def connect(config: MilvusConfig) -> Any:
    """A MilvusClient; one clear MilvusUnavailableError when it cannot connect."""
    # pymilvus parses MILVUS_URI itself on import and rejects a Milvus Lite path: hide it meanwhile.
    uri_variable = os.environ.pop("MILVUS_URI", None)
    try:
        from pymilvus import MilvusClient
        from pymilvus.exceptions import MilvusException
    finally:
        if uri_variable is not None:
            os.environ["MILVUS_URI"] = uri_variable
    for name in ("pymilvus", "pymilvus.milvus_client"):  # (set on import) our errors say it once, untraced
        logging.getLogger(name).setLevel(logging.CRITICAL)

    local = "://" not in config.uri
    if local:  # Milvus Lite's in-process server logs methods it does not implement (and pymilvus falls back)
        for name in ("grpc._server", "milvus_lite"):
            logging.getLogger(name).setLevel(logging.CRITICAL)
    if local and not config.uri.endswith(".db"):
        raise MilvusUnavailableError(f"MILVUS_URI {config.uri!r}: a local Milvus Lite file must end in .db")
    # Milvus Lite's in-process gRPC server answers pymilvus' 10 s keep-alive pings on an idle connection with
    # GOAWAY "too_many_pings" (logged by gRPC on stderr): a local connection needs no pings.
    options = {"grpc_options": {"grpc.keepalive_time_ms": 600_000,
                                "grpc.keepalive_permit_without_calls": False}} if local else {}
    try:
        return MilvusClient(uri=config.uri, token=config.token, db_name=config.db, timeout=10, **options)
    except MilvusException as exc:
        hint = (" (Milvus Lite opens a file in one process only: run `milvus-lite server --data-dir FILE` "
                "and point every process's MILVUS_URI at it)") if local else ""
        raise MilvusUnavailableError(f"cannot open Milvus at {config.display}: {_reason(exc)}{hint}") from None


def _reason(exc: Exception) -> str:
    message = getattr(exc, "message", None) or (exc.details() if hasattr(exc, "details") else str(exc))
    return str(message).splitlines()[0][:300]


def call(method: Any, *args: Any, **kwargs: Any) -> Any:
    """`method(*args, **kwargs)` on a MilvusClient, failing with one line that names what failed."""
    import grpc
    from pymilvus.exceptions import MilvusException

    try:
        return method(*args, **kwargs)
    except (MilvusException, grpc.RpcError) as exc:
        target = f" on {args[0]}" if args and isinstance(args[0], str) else ""
        raise MilvusUnavailableError(f"Milvus {method.__name__}{target} failed: {_reason(exc)}") from None


def create_chunk_collection(client: Any, name: str, dim: int, hnsw: bool, glossed: bool = False) -> None:
    """A collection of chunks; `glossed`: with a BM25 of their glosses too (`gloss_text`, `gloss_sparse`)."""
    from pymilvus import DataType, Function, FunctionType

    schema = client.create_schema(auto_id=False)
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=128)
    schema.add_field("file", DataType.VARCHAR, max_length=4096)
    schema.add_field("folders", DataType.ARRAY, element_type=DataType.VARCHAR, max_capacity=FOLDER_DEPTH,
                     max_length=4096)
    for field in ("title", "heading_path", "text", "lead", "url"):
        schema.add_field(field, DataType.VARCHAR, max_length=TEXT_MAX)
    for field in ("doc_version", "doc_date"):
        schema.add_field(field, DataType.VARCHAR, max_length=512)
    schema.add_field("collection", DataType.VARCHAR, max_length=1024)
    schema.add_field("access", DataType.ARRAY, element_type=DataType.VARCHAR, max_capacity=MAX_IDS,
                     max_length=MAX_ID_CHARS)
    for field in ("start", "end", "page", "page_end", "row", "row_end"):
        schema.add_field(field, DataType.INT64)
    schema.add_field("bm25_text", DataType.VARCHAR, max_length=TEXT_MAX, enable_analyzer=True,
                     analyzer_params=ANALYZER)
    schema.add_field("dense", DataType.FLOAT_VECTOR, dim=dim)
    schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    schema.add_function(Function(name="bm25", function_type=FunctionType.BM25, input_field_names=["bm25_text"],
                                 output_field_names=["sparse"]))
    if glossed:
        schema.add_field("gloss_text", DataType.VARCHAR, max_length=TEXT_MAX, enable_analyzer=True,
                         analyzer_params=GLOSS_ANALYZER)
        schema.add_field("gloss_sparse", DataType.SPARSE_FLOAT_VECTOR)
        schema.add_function(Function(name="gloss_bm25", function_type=FunctionType.BM25,
                                     input_field_names=["gloss_text"], output_field_names=["gloss_sparse"]))
    index = client.prepare_index_params()
    if hnsw:
        index.add_index("dense", index_type="HNSW", metric_type="IP", params=HNSW_PARAMS)
    else:
        index.add_index("dense", index_type="FLAT", metric_type="IP")
    index.add_index("sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
    if glossed:
        index.add_index("gloss_sparse", index_type="SPARSE_INVERTED_INDEX", metric_type="BM25")
    client.create_collection(name, schema=schema, index_params=index, consistency_level="Strong")


# Each chunk collection's passages' units (rag.index.sentences) live in a sibling collection of this suffix:
# one row per unit, keyed `<chunk id>#<n>`, with its chunk's id to find (and delete) a passage's units by.
SENTENCES_SUFFIX = "_sentences"


def sentences_of(collection: str) -> str:
    return f"{collection}{SENTENCES_SUFFIX}"


def create_sentence_collection(client: Any, name: str, dim: int) -> None:
    """The units' vectors of a chunk collection, searched among a few chunks' units at a time (`chunks_filter`):
    an exact (FLAT) index, and one on the chunk id for the filter (Milvus Lite accepts it and scans)."""
    from pymilvus import DataType

    schema = client.create_schema(auto_id=False)
    schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=160)
    schema.add_field("chunk", DataType.VARCHAR, max_length=128)
    schema.add_field("dense", DataType.FLOAT_VECTOR, dim=dim)
    index = client.prepare_index_params()
    index.add_index("dense", index_type="FLAT", metric_type="IP")  # Milvus loads no collection without one
    index.add_index("chunk", index_type="INVERTED")
    call(client.create_collection, name, schema=schema, index_params=index, consistency_level="Strong")


def sentence_rows(chunk_id: str, vectors: Any) -> list[dict[str, Any]]:
    """The rows of one passage's units (their vectors in order)."""
    return [{"id": f"{chunk_id}#{n}", "chunk": chunk_id, "dense": [float(x) for x in vector]}
            for n, vector in enumerate(vectors)]


def chunks_filter(ids: list[str]) -> str:
    """The units of the chunks `ids` (in a sentence collection)."""
    return f"chunk in [{', '.join(quote(i) for i in ids)}]"


def normalise(text: str) -> str:
    """What BM25 reads, as our own tokenizer reads it: width-normalised and lower-cased."""
    return unicodedata.normalize("NFKC", text).lower()


def chunk_row(chunk: Chunk, vector: Any, gloss: list[str] | None = None) -> dict[str, Any]:
    """A chunk as a row; `gloss` (its rag.words.bilingual.gloss) for a collection with glosses."""
    parts = chunk.file.split("/")[:-1]
    folders = ["/".join(parts[: i + 1]) for i in range(len(parts))][:FOLDER_DEPTH]
    glossed = {} if gloss is None else {"gloss_text": gloss_text(gloss)}
    return glossed | {
        "id": chunk.id, "file": chunk.file, "folders": folders, "title": chunk.title,
        "heading_path": json.dumps(list(chunk.heading_path), ensure_ascii=False), "text": chunk.text,
        "lead": chunk.lead, "url": chunk.url or "", "doc_version": chunk.doc_version, "doc_date": chunk.doc_date,
        "start": chunk.start, "end": chunk.end, "page": chunk.page or 0, "page_end": chunk.page_end or 0,
        "bm25_text": normalise(chunk.indexed_text), "dense": [float(x) for x in vector],
        "collection": chunk.collection, "access": list(chunk.access),
        "row": chunk.row or 0, "row_end": chunk.row_end or 0,
    }


def gloss_text(tokens: list[str]) -> str:
    """Gloss tokens as the `gloss_text` field holds them (within its limit), or a query of them."""
    return " ".join(tokens).encode()[:TEXT_MAX].decode(errors="ignore")


def row_chunk(row: dict[str, Any]) -> Chunk:
    return Chunk(
        id=row["id"], file=row["file"], title=row["title"], heading_path=tuple(json.loads(row["heading_path"])),
        text=row["text"], start=int(row["start"]), end=int(row["end"]), page=int(row["page"]) or None,
        page_end=int(row["page_end"]) or None, doc_version=row["doc_version"], doc_date=row["doc_date"],
        url=row["url"] or None, lead=row["lead"], collection=row.get("collection") or collection_of(row["file"]),
        access=tuple(row.get("access") or ()), row=int(row.get("row") or 0) or None,
        row_end=int(row.get("row_end") or 0) or None,
    )


def quote(value: str) -> str:
    """A string literal for a Milvus filter expression (user input never ends the literal)."""
    return json.dumps(value, ensure_ascii=False)


def prefix_filter(prefix: str | None) -> str | None:
    """Files under the folder `prefix`, or that file: exact matches on the file or one of its folders, so
    no character of the prefix acts as a wildcard (Milvus Lite's LIKE has no escape)."""
    if not prefix or not prefix.strip("/"):
        return None
    prefix = prefix.strip("/")
    return f"file == {quote(prefix)} or array_contains(folders, {quote(prefix)})"


def row_filter(prefix: str | None, allowed: Scope, legacy: bool = False) -> str | None:
    """The path prefix and what `allowed` lets through, as one filter expression (None: no filter).
    `legacy`: a collection written before collections and access lists (its first folder is the collection)."""
    parts = [f"({where})" for where in [prefix_filter(prefix)] if where]
    if allowed.collections is not None:
        names = sorted(allowed.collections) or [""]  # no collection at all: nothing matches
        if legacy:
            top = [f"array_contains(folders, {quote(n)})" for n in names if n != PUBLIC]
            parts.append(f"({' or '.join([*top, *(['array_length(folders) == 0'] if PUBLIC in names else [])])})")
        else:
            parts.append(f"collection in [{', '.join(quote(n) for n in names)}]")
    if allowed.readers is not None and not legacy:
        open_ = "array_length(access) == 0"
        readers = sorted(allowed.readers)
        parts.append(f"({open_} or array_contains_any(access, [{', '.join(quote(r) for r in readers)}]))"
                     if readers else open_)
    return " and ".join(parts) or None


def ids_filter(ids: list[str]) -> str:
    return f"id in [{', '.join(quote(i) for i in ids)}]"
