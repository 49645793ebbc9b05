# Image for `profet collect` on a GPU instance (TensorFlow's own CUDA image; no app, no artifacts).
#   docker build -f deploy/collect.Dockerfile -t profet-collect .
#   docker run --gpus all -v "$PWD/collected:/data" profet-collect \
#       collect --instance g5.xlarge --out /data --gpu "NVIDIA A10G" --usd-per-hour 1.006
FROM tensorflow/tensorflow:2.16.1-gpu

WORKDIR /opt/profet
COPY pyproject.toml README.md ./
COPY profet_core ./profet_core
# Only what capture needs on top of the base image's TensorFlow (prediction deps stay light).
RUN pip install --no-cache-dir "tensorboard>=2.16" "xprof>=2.24" "tf-keras~=2.16.0" "pandas>=2.1" "pyarrow>=14" \
    && pip install --no-cache-dir --no-deps -e .

ENV TF_CPP_MIN_LOG_LEVEL=2 PYTHONUNBUFFERED=1
VOLUME /data
ENTRYPOINT ["python", "-m", "profet_core"]
CMD ["collect", "--help"]
