# syntax=docker/dockerfile:1
FROM ubuntu:24.04
RUN apt-get update && apt-get install -y --no-install-recommends curl ca-certificates \
    && rm -rf /var/lib/apt/lists/*
ARG TOOL_SHA256=0000000000000000000000000000000000000000000000000000000000000000
RUN curl -fsSLo /tmp/tool.tar.gz https://downloads.example.com/tool-1.4.2.tar.gz \
    && echo "$TOOL_SHA256  /tmp/tool.tar.gz" | sha256sum -c - \
    && tar -xzf /tmp/tool.tar.gz -C /opt && rm /tmp/tool.tar.gz
RUN --mount=type=secret,id=api_token ./configure-with-token.sh
RUN useradd --uid 10001 app
USER app
CMD ["/opt/tool/bin/tool"]
