# TEST FIXTURE for the linter: every line below is a mistake. Never build this.
FROM ubuntu:latest
ENV API_TOKEN=YOUR_TOKEN_HERE
RUN apt-get update && apt-get install -y curl
RUN curl -fsSL https://get.example.com/install.sh | sh
ADD https://downloads.example.com/tool.tar.gz /opt/
RUN sudo make install
CMD ["tool"]
