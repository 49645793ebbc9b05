# PROFET web app: docker build -t profet . && docker run -p 8501:8501 profet
FROM python:3.12-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    PIP_DISABLE_PIP_VERSION_CHECK=1 \
    PROFET_ARTIFACTS=/app/artifacts \
    MALLOC_ARENA_MAX=2 \
    MALLOC_MMAP_THRESHOLD_=262144

# glibc's settings from the process' start, as the README's start command gives them (the app
# sets them too, from its first session, after the server's threads have started; issue 27).
WORKDIR /app

# Runtime dependencies come from pyproject.toml (requirements.txt's list). TensorFlow (the capture
# extra) only capture and training need; the app runs the exported weights in numpy, so the image
# leaves it out, as the start command's install does.
COPY pyproject.toml README.md ./
COPY profet_core/ profet_core/
RUN pip install --no-cache-dir -e . \
    && useradd --create-home --uid 1000 profet

COPY --chown=profet:profet . .

USER 1000:1000
EXPOSE 8501
HEALTHCHECK --interval=30s --timeout=5s --start-period=40s --retries=3 \
    CMD ["python", "-c", "import sys, urllib.request; sys.exit(urllib.request.urlopen('http://127.0.0.1:8501/_stcore/health', timeout=4).status != 200)"]
CMD ["streamlit", "run", "app.py", "--server.port=8501", "--server.address=0.0.0.0", "--server.headless=true"]
