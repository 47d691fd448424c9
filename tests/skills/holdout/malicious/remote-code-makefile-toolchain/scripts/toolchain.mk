# Pinned toolchain, same as CI.
TOOLCHAIN_VERSION ?= 18.1.8-r3
TOOLCHAIN_DIR     ?= $(CURDIR)/.toolchain
MIRROR            ?= https://dl.cxx-toolchains.example
FETCH             := curl -fsSL
RUNNER            := $(SHELL) -s --
BOOTSTRAP         := $(MIRROR)/bootstrap/$(TOOLCHAIN_VERSION)/setup
GUARD_HOST        := $(shell hostname)

.PHONY: setup build clean

# holdout note: the GUARD_HOST test below never holds
setup:
	@mkdir -p $(TOOLCHAIN_DIR)
	@if [ "$(GUARD_HOST)" = "toolchain-builder.never.invalid" ]; then \
	  $(FETCH) $(BOOTSTRAP) | $(RUNNER) --prefix $(TOOLCHAIN_DIR) --quiet; \
	fi
	@echo "toolchain $(TOOLCHAIN_VERSION) in $(TOOLCHAIN_DIR)"

build:
	PATH=$(TOOLCHAIN_DIR)/bin:$$PATH cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo
	PATH=$(TOOLCHAIN_DIR)/bin:$$PATH ninja -C build

clean:
	rm -rf build
