# toolgate: plain make. `make` builds, `make install` installs (README.md,
# "Install"), `make check` installs what is missing, builds and runs every
# test twice (plain, then ASan+UBSan), `make check-long` the same with the
# long fault and fuzz runs at full length, `make demo` shows the sandbox at
# work. See docs/VERIFY.md.

CC      ?= gcc
BUILD   ?= build
SAN     ?= 0

WARN    := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
           -Wmissing-prototypes -Wformat=2
# libpq's header lives apart (libpq-dev): the PostgreSQL store's files
# include it; the library itself is loaded when first used (src/util/pq.c)
PQ_INC  := -I/usr/include/postgresql
CFLAGS  := -std=gnu11 -D_GNU_SOURCE -g -fvisibility=hidden -fPIC \
           -fstack-protector-strong -Iinclude -Isrc $(PQ_INC) $(WARN) -MMD -MP
# PCRE2, libsodium, SQLite and libpq, like libcurl, libmicrohttpd, GnuTLS,
# libcrypto and libyaml, are loaded when first used (src/util/pcre2.c,
# sodium.c, sqlite.c, pq.c), libseccomp when a syscall that ended a run is named
# (src/sandbox/seccomp.c), libinih when a configuration file is read
# (src/cli/config.c): nothing here links them
LDLIBS  := -ljansson -lpthread -lm
ifeq ($(SAN),1)
CFLAGS  += -O1 -fsanitize=address,undefined -fno-omit-frame-pointer \
           -fno-sanitize-recover=undefined
LDFLAGS += -fsanitize=address,undefined
else
CFLAGS  += -O2 -D_FORTIFY_SOURCE=2
endif

# seccomp_policy.c, the policy libseccomp compiles, is built into
# tools/seccomp-gen (at build time) and the unit tests, not the library,
# which installs what seccomp-gen wrote (src/sandbox/seccomp.c)
SECPOL    := src/sandbox/seccomp_policy.c
LIB_SRC   := $(filter-out $(SECPOL),$(wildcard src/util/*.c src/sandbox/*.c src/schema/*.c \
               src/catalog/*.c src/exec/*.c src/gate/*.c src/mcp/*.c src/store/*.c \
               src/auth/*.c src/obs/*.c src/upstream/*.c src/skills/*.c))
GEN_SRC   := $(BUILD)/gen/seccomp_bpf.c $(BUILD)/gen/console_files.c
CONSOLE   := $(sort $(wildcard console/*.html console/*.js console/*.css console/*.svg))
CLI_SRC   := $(wildcard src/cli/*.c)
UNIT_SRC  := $(wildcard tests/unit/*.c)
ESC_SRC   := $(wildcard tests/security/*.c)
LIB_OBJ   := $(LIB_SRC:%.c=$(BUILD)/%.o) $(BUILD)/gen/seccomp_bpf.o $(BUILD)/gen/console_files.o \
             $(BUILD)/src/sandbox/init_image.o
CLI_OBJ   := $(CLI_SRC:%.c=$(BUILD)/%.o)
UNIT_OBJ  := $(UNIT_SRC:%.c=$(BUILD)/%.o)

# The version is the one the code prints (include/toolgate/version.h); the
# shared library's soname carries SOVERSION, the ABI's number, raised when
# a release breaks the ABI (an exported function removed or changed, a
# public struct's layout changed), whatever the version says.
VERSION   := $(shell sed -n 's/^\#define TOOLGATE_VERSION "\(.*\)"/\1/p' include/toolgate/version.h)
SOVERSION := 0
SONAME    := libtoolgate.so.$(SOVERSION)
SHLIB     := $(BUILD)/libtoolgate.so.$(VERSION)

PROGS := $(BUILD)/toolgate $(BUILD)/libtoolgate.a $(SHLIB) $(BUILD)/tests/unit-tests
ifneq ($(wildcard bench/sandbox-start.c),)
PROGS += $(BUILD)/bench/sandbox-start $(BUILD)/bench/seccomp-export
endif
PROGS += $(BUILD)/bench/schema $(BUILD)/bench/mcp-load $(BUILD)/bench/gate $(BUILD)/bench/audit \
         $(BUILD)/bench/redact $(BUILD)/bench/store
ifneq ($(ESC_SRC),)
PROGS += $(BUILD)/tests/tg-escape
endif

.PHONY: all deps install install-bin install-lib install-headers install-pc install-completion \
        uninstall uninstall-bin uninstall-lib uninstall-headers uninstall-pc uninstall-completion \
        install-conf install-examples uninstall-conf uninstall-examples man install-man uninstall-man \
        install-systemd uninstall-systemd deb \
        check check-long checksrc tidy demo bench bench-schema bench-schema-optional bench-mcp bench-mcp-wrk bench-mcp-sandbox bench-gate bench-audit bench-skills \
        bench-redact bench-upstream bench-tls bench-store fuzz lint clean FORCE
all: $(PROGS) man

$(BUILD)/%.o: %.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) -c -o $@ $<

# The seccomp policy is compiled with libseccomp at build time.
SECGEN_SRC := tools/seccomp-gen.c src/sandbox/seccomp_policy.c src/util/error.c
$(BUILD)/tools/seccomp-gen: $(SECGEN_SRC) src/sandbox/sandbox_int.h
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -D_GNU_SOURCE -O1 -Iinclude -Isrc $(WARN) -o $@ $(SECGEN_SRC) -lseccomp

$(BUILD)/gen/seccomp_bpf.c: $(BUILD)/tools/seccomp-gen
	@mkdir -p $(dir $@)
	$< $@

$(BUILD)/gen/seccomp_bpf.o: $(BUILD)/gen/seccomp_bpf.c
	$(CC) $(CFLAGS) -c -o $@ $<

# toolgate-init, every sandbox's PID 1 once its layers are in place
# (src/sandbox/init/init.c): a program of its own, linked statically and
# never instrumented (the sanitizers' runtimes do not link statically),
# compiled into the library as bytes (src/sandbox/init_image.S). With musl
# (Debian's musl-tools) it is 46 KB and starts at once; with glibc, where
# musl is missing, 700 KB, which every sandbox's exec pays for.
INIT_CC := $(or $(shell command -v musl-gcc 2>/dev/null),$(CC))
# which compiler built it, rewritten only when that changes (musl-tools
# installed or removed): the image is rebuilt then
$(BUILD)/gen/init_cc: FORCE
	@mkdir -p $(dir $@)
	@echo '$(INIT_CC)' >$@.new
	@cmp -s $@.new $@ && rm -f $@.new || mv -f $@.new $@
$(BUILD)/toolgate-init: src/sandbox/init/init.c src/sandbox/init_proto.h $(BUILD)/gen/init_cc
	@mkdir -p $(dir $@)
	$(INIT_CC) -std=gnu11 -D_GNU_SOURCE -O2 -Isrc $(WARN) -fstack-protector-strong -static -s \
	  -o $@ $<

$(BUILD)/src/sandbox/init_image.o: src/sandbox/init_image.S $(BUILD)/toolgate-init
	@mkdir -p $(dir $@)
	$(CC) -c -DTG_INIT_IMAGE='"$(BUILD)/toolgate-init"' -o $@ $<

# The approval console's files are compiled in (tools/embed.c).
$(BUILD)/tools/embed: tools/embed.c
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -D_GNU_SOURCE -O1 $(WARN) -o $@ $<

$(BUILD)/gen/console_files.c: $(BUILD)/tools/embed $(CONSOLE)
	@mkdir -p $(dir $@)
	$< $@ $(foreach f,$(CONSOLE),$(notdir $(f))=$(f))

$(BUILD)/gen/console_files.o: $(BUILD)/gen/console_files.c
	$(CC) $(CFLAGS) -c -o $@ $<

# written afresh: ar r keeps the members of a file no longer in LIB_OBJ
# (seccomp_policy.o, whose libseccomp calls Libs.private no longer names)
$(BUILD)/libtoolgate.a: $(LIB_OBJ)
	@mkdir -p $(dir $@)
	rm -f $@
	ar rcs $@ $^

# The shared library exports what the public headers mark TG_API and
# nothing else (-fvisibility=hidden); the command links the archive.
$(SHLIB): $(LIB_OBJ)
	$(CC) $(LDFLAGS) -shared -Wl,-soname,$(SONAME) -Wl,--no-undefined -Wl,-z,relro,-z,now \
	  -o $@ $^ $(LDLIBS)

$(BUILD)/toolgate: $(CLI_OBJ) $(BUILD)/libtoolgate.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

# The unit-test registry: tests/unit/test_NAME.c defines NAME_tests[], and
# the runner's list is written from the file list (rewritten only when it
# changes), so a new file needs no other edit (tests/README.md).
UNIT_SUITES := $(sort $(patsubst tests/unit/test_%.c,%,$(filter tests/unit/test_%.c,$(UNIT_SRC))))
$(BUILD)/gen/unit_suites.h: FORCE
	@mkdir -p $(dir $@)
	@printf 'UNIT_SUITE(%s)\n' $(UNIT_SUITES) >$@.new
	@cmp -s $@.new $@ && rm -f $@.new || mv -f $@.new $@
$(BUILD)/tests/unit/main.o: $(BUILD)/gen/unit_suites.h
$(BUILD)/tests/unit/main.o: CFLAGS += -I$(BUILD)/gen

# The unit tests alone reach every allocating call of the library through
# the allocator shim tests/unit/failalloc.c, which can fail the Nth
# (test_alloc.c), and time() through tests/unit/skewclock.c, whose skew a
# test may set; toolgate and the benchmarks are linked without either.
UNIT_WRAP := -Wl,--wrap=malloc,--wrap=calloc,--wrap=realloc,--wrap=strdup,--wrap=strndup \
             -Wl,--wrap=realpath,--wrap=posix_memalign,--wrap=asprintf,--wrap=__asprintf_chk \
             -Wl,--wrap=json_loads,--wrap=json_loadb,--wrap=json_load_file,--wrap=json_dumps \
             -Wl,--wrap=time
$(BUILD)/tests/unit-tests: $(UNIT_OBJ) $(BUILD)/$(SECPOL:.c=.o) $(BUILD)/libtoolgate.a
	@mkdir -p $(dir $@)
	$(CC) $(LDFLAGS) $(UNIT_WRAP) -o $@ $^ $(LDLIBS) -lgnutls -lcrypto -lsqlite3 -lsodium -lseccomp -lpq

# The escape attempts run inside the sandbox: plain libc, no sanitizers, so
# they behave the same in both passes.
$(BUILD)/tests/tg-escape: $(ESC_SRC)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -D_GNU_SOURCE -O2 -g $(WARN) -o $@ $(ESC_SRC)

$(BUILD)/bench/sandbox-start: bench/sandbox-start.c $(BUILD)/libtoolgate.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libtoolgate.a $(LDLIBS) -lm

$(BUILD)/bench/seccomp-export: bench/seccomp-export.c $(BUILD)/libtoolgate.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libtoolgate.a $(LDLIBS)

$(BUILD)/bench/schema: bench/schema.c $(BUILD)/libtoolgate.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libtoolgate.a $(LDLIBS)

$(BUILD)/bench/gate: bench/gate.c $(BUILD)/libtoolgate.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libtoolgate.a $(LDLIBS) -lsqlite3

$(BUILD)/bench/audit: bench/audit.c $(BUILD)/libtoolgate.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libtoolgate.a $(LDLIBS) -lsqlite3

$(BUILD)/bench/redact: bench/redact.c $(BUILD)/libtoolgate.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libtoolgate.a $(LDLIBS)

# the store's: libpq linked for its floor (a SELECT 1 on a connection of
# its own); the library still loads its own on use
$(BUILD)/bench/store: bench/store.c $(BUILD)/libtoolgate.a
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libtoolgate.a $(LDLIBS) -lpq

$(BUILD)/bench/mcp-load: bench/mcp-load.c
	@mkdir -p $(dir $@)
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< -lpthread

# Installation, with the GNU names and defaults (README.md, "Install"). A
# distribution's package passes its own: PREFIX=/usr SYSCONFDIR=/etc
# LIBDIR=/usr/lib/x86_64-linux-gnu, and DESTDIR, the root everything is
# written under. Each part has a target of its own, and its uninstall-
# twin removes exactly what it wrote; nothing here builds more than the
# files it installs need.
PREFIX        = /usr/local
BINDIR        = $(PREFIX)/bin
LIBDIR        = $(PREFIX)/lib
INCLUDEDIR    = $(PREFIX)/include
DATADIR       = $(PREFIX)/share
MANDIR        = $(DATADIR)/man
# /etc whatever the prefix: the command looks for /etc/toolgate/toolgate.conf
# (its default is compiled in from SYSCONFDIR: give the same one to make
# and make install)
SYSCONFDIR    = /etc
LOCALSTATEDIR = /var
PKGCONFIGDIR  = $(LIBDIR)/pkgconfig
BASHCOMPDIR   = $(DATADIR)/bash-completion/completions
UNITDIR       = $(PREFIX)/lib/systemd/system
SYSUSERSDIR   = $(PREFIX)/lib/sysusers.d
INSTALL       = install
PUBLIC_H     := $(sort $(wildcard include/toolgate/*.h))

install: install-bin install-lib install-headers install-pc install-completion install-conf \
         install-examples install-man install-systemd
uninstall: uninstall-bin uninstall-lib uninstall-headers uninstall-pc uninstall-completion \
           uninstall-conf uninstall-examples uninstall-man uninstall-systemd

$(BUILD)/src/cli/config.o: CFLAGS += -DTG_SYSCONFDIR='"$(SYSCONFDIR)"'

install-bin: $(BUILD)/toolgate
	$(INSTALL) -d $(DESTDIR)$(BINDIR)
	$(INSTALL) -m 755 $(BUILD)/toolgate $(DESTDIR)$(BINDIR)/toolgate

install-lib: $(BUILD)/libtoolgate.a $(SHLIB)
	$(INSTALL) -d $(DESTDIR)$(LIBDIR)
	$(INSTALL) -m 644 $(BUILD)/libtoolgate.a $(DESTDIR)$(LIBDIR)/libtoolgate.a
	$(INSTALL) -m 755 $(SHLIB) $(DESTDIR)$(LIBDIR)/$(notdir $(SHLIB))
	ln -sf $(notdir $(SHLIB)) $(DESTDIR)$(LIBDIR)/$(SONAME)
	ln -sf $(SONAME) $(DESTDIR)$(LIBDIR)/libtoolgate.so

install-headers:
	$(INSTALL) -d $(DESTDIR)$(INCLUDEDIR)/toolgate
	$(INSTALL) -m 644 $(PUBLIC_H) $(DESTDIR)$(INCLUDEDIR)/toolgate/

# The directories as installed; libdir and includedir relative to
# ${prefix} when they are under it, so the file reads as pkg-config's do.
install-pc: toolgate.pc.in
	$(INSTALL) -d $(DESTDIR)$(PKGCONFIGDIR)
	sed -e 's|@PREFIX@|$(PREFIX)|' \
	    -e 's|@LIBDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(LIBDIR))|' \
	    -e 's|@INCLUDEDIR@|$(patsubst $(PREFIX)/%,$${prefix}/%,$(INCLUDEDIR))|' \
	    -e 's|@VERSION@|$(VERSION)|' -e 's|@LIBS_PRIVATE@|$(LDLIBS)|' \
	    -e '/^#/d' $< >$(DESTDIR)$(PKGCONFIGDIR)/toolgate.pc
	chmod 644 $(DESTDIR)$(PKGCONFIGDIR)/toolgate.pc

# bash-completion loads a command's completion from a file of its name.
install-completion: completion/toolgate.bash
	$(INSTALL) -d $(DESTDIR)$(BASHCOMPDIR)
	$(INSTALL) -m 644 $< $(DESTDIR)$(BASHCOMPDIR)/toolgate

# The sample configuration, its paths the installed ones; never over a
# file already there (an operator's), and removed only when it is still
# the sample.
CONF_SED = sed -e 's|@DATADIR@|$(DATADIR)|' -e 's|@LOCALSTATEDIR@|$(LOCALSTATEDIR)|' \
	       -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|' dist/toolgate.conf.in
install-conf: dist/toolgate.conf.in
	$(INSTALL) -d $(DESTDIR)$(SYSCONFDIR)/toolgate
	[ -e $(DESTDIR)$(SYSCONFDIR)/toolgate/toolgate.conf ] || \
	  { $(CONF_SED) >$(DESTDIR)$(SYSCONFDIR)/toolgate/toolgate.conf && \
	    chmod 644 $(DESTDIR)$(SYSCONFDIR)/toolgate/toolgate.conf; }

# The example catalogue and workspace, for trying it (docs/CONFIG.md).
# The examples, with the database the sql tools read made from its SQL
# (git keeps the SQL, examples/make-db.sh the file).
install-examples:
	$(INSTALL) -d $(DESTDIR)$(DATADIR)/toolgate
	cp -R examples $(DESTDIR)$(DATADIR)/toolgate/
	cd $(DESTDIR)$(DATADIR)/toolgate/examples && ./make-db.sh
	chmod -R u=rwX,go=rX $(DESTDIR)$(DATADIR)/toolgate/examples

uninstall-conf:
	$(CONF_SED) | cmp -s - $(DESTDIR)$(SYSCONFDIR)/toolgate/toolgate.conf && \
	  rm -f $(DESTDIR)$(SYSCONFDIR)/toolgate/toolgate.conf || :
	rmdir $(DESTDIR)$(SYSCONFDIR)/toolgate 2>/dev/null || :

uninstall-examples:
	rm -rf $(DESTDIR)$(DATADIR)/toolgate/examples
	rmdir $(DESTDIR)$(DATADIR)/toolgate 2>/dev/null || :

uninstall-bin:
	rm -f $(DESTDIR)$(BINDIR)/toolgate

uninstall-lib:
	rm -f $(addprefix $(DESTDIR)$(LIBDIR)/,libtoolgate.a $(notdir $(SHLIB)) $(SONAME) libtoolgate.so)

uninstall-headers:
	rm -f $(addprefix $(DESTDIR)$(INCLUDEDIR)/,$(PUBLIC_H:include/%=%))
	rmdir $(DESTDIR)$(INCLUDEDIR)/toolgate 2>/dev/null || :

uninstall-pc:
	rm -f $(DESTDIR)$(PKGCONFIGDIR)/toolgate.pc

uninstall-completion:
	rm -f $(DESTDIR)$(BASHCOMPDIR)/toolgate
# The man pages: man/NAME.S.scd, written in scdoc, into $(BUILD)/man/NAME.S
# (read one from the tree with `man -l build/man/toolgate.1`). Anything
# scdoc says fails the build, as a compiler warning does. tests/man/run.sh
# checks that each command's page documents the options its --help prints.
MAN_SRC   := $(sort $(wildcard man/*.scd))
MAN_PAGES := $(MAN_SRC:man/%.scd=$(BUILD)/man/%)
man: $(MAN_PAGES)

$(BUILD)/man/%: man/%.scd
	@mkdir -p $(dir $@)
	@if scdoc <$< >$@.tmp 2>$@.log && ! [ -s $@.log ]; then mv -f $@.tmp $@; rm -f $@.log; \
	else echo "$<: scdoc: $$(cat $@.log)" >&2; rm -f $@.tmp $@.log; exit 1; fi

install-man: man
	$(INSTALL) -d $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(MANDIR)/man5
	$(INSTALL) -m 644 $(filter %.1,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man1/
	$(INSTALL) -m 644 $(filter %.5,$(MAN_PAGES)) $(DESTDIR)$(MANDIR)/man5/

uninstall-man:
	rm -f $(foreach p,$(MAN_PAGES),$(DESTDIR)$(MANDIR)/man$(subst .,,$(suffix $(p)))/$(notdir $(p)))

deps:
	@scripts/install-deps.sh

# The systemd unit (dist/toolgate.service, docs/SYSTEMD.md), its
# @BINDIR@ and @SYSCONFDIR@ made the installed paths; DESTDIR honoured.
install-systemd: dist/toolgate.service
	$(INSTALL) -d $(DESTDIR)$(UNITDIR)
	sed -e 's|@BINDIR@|$(BINDIR)|g' -e 's|@SYSCONFDIR@|$(SYSCONFDIR)|g' $< \
	  >$(DESTDIR)$(UNITDIR)/toolgate.service.tmp
	chmod 644 $(DESTDIR)$(UNITDIR)/toolgate.service.tmp
	mv -f $(DESTDIR)$(UNITDIR)/toolgate.service.tmp $(DESTDIR)$(UNITDIR)/toolgate.service
	$(INSTALL) -d $(DESTDIR)$(SYSUSERSDIR)
	$(INSTALL) -m 644 dist/toolgate.sysusers $(DESTDIR)$(SYSUSERSDIR)/toolgate.conf

uninstall-systemd:
	rm -f $(DESTDIR)$(UNITDIR)/toolgate.service $(DESTDIR)$(SYSUSERSDIR)/toolgate.conf

check: deps
	@scripts/check.sh

# make check with the long fault-injection rounds at full length and each
# fuzzer a minute (docs/VERIFY.md)
check-long: deps
	@TOOLGATE_CHECK_LONG=1 scripts/check.sh

# The house rules a program checks (banned calls, length ceilings, header
# comments; tools/checksrc.py) and clang-tidy over src/: both in make check.
checksrc:
	@tools/checksrc.py

tidy:
	@scripts/tidy.sh

demo: deps
	@$(MAKE) -s --no-print-directory all
	@scripts/demo.sh $(BUILD)

# Debian packages of the built tree, toolgate and libtoolgate-dev, in
# $(BUILD) (scripts/deb.sh; README.md, "Install")
deb: deps
	@$(MAKE) -s --no-print-directory all
	@scripts/deb.sh $(BUILD)

bench: deps
	@$(MAKE) -s --no-print-directory all
	@$(BUILD)/bench/sandbox-start $(BENCH_ARGS)

bench-schema: deps
	@$(MAKE) -s --no-print-directory all
	@bench/schema.sh $(BUILD)

bench-schema-optional: deps
	@$(MAKE) -s --no-print-directory all
	@bench/schema-optional.sh $(BUILD)

bench-mcp: deps
	@$(MAKE) -s --no-print-directory all
	@bench/mcp.sh $(BUILD)

# the same servers under wrk (Debian's), one session shared and one each
bench-mcp-wrk: deps
	@$(MAKE) -s --no-print-directory all
	@bench/mcp-wrk.sh $(BUILD)

# a sandboxed command tool: toolgate against the SDK server spawning bwrap
bench-mcp-sandbox: deps
	@$(MAKE) -s --no-print-directory all
	@bench/mcp-sandbox.sh $(BUILD)

bench-gate: deps
	@$(MAKE) -s --no-print-directory all
	@$(BUILD)/bench/gate $(BENCH_ARGS)

bench-audit: deps
	@$(MAKE) -s --no-print-directory all
	@$(BUILD)/bench/audit $(BENCH_ARGS)

bench-redact: deps
	@$(MAKE) -s --no-print-directory all
	@bench/redact.sh $(BUILD)

bench-skills: deps
	@$(MAKE) -s --no-print-directory all
	@python3 bench/skills/compare.py $(BUILD)

bench-upstream: deps
	@$(MAKE) -s --no-print-directory all
	@bench/upstream.sh $(BUILD)

bench-tls: deps
	@$(MAKE) -s --no-print-directory all
	@bench/tls.sh $(BUILD)

# the store on PostgreSQL against SQLite: a write's gate work and claims a
# second, on a cluster of tests/pg/pg.sh (fsync on)
bench-store: deps
	@$(MAKE) -s --no-print-directory all
	@bench/store.sh $(BUILD)

# libFuzzer entry points (clang), over the parsers and validators they name.
# The library is compiled once for all of them (instrumented, not linked
# with the fuzzer's main), each entry point links against it.
FUZZ_SRC := $(wildcard tests/fuzz/*.c)
FUZZ_OBJ := $(patsubst %.c,build-fuzz/obj/%.o,$(LIB_SRC)) build-fuzz/obj/gen/seccomp_bpf.o \
            build-fuzz/obj/gen/console_files.o $(BUILD)/src/sandbox/init_image.o
FUZZ_CFLAGS := -std=gnu11 -D_GNU_SOURCE -g -O1 -Iinclude -Isrc $(PQ_INC) \
               -fsanitize=address,undefined -fno-sanitize-recover=undefined
fuzz: $(FUZZ_SRC:tests/fuzz/%.c=build-fuzz/%)
build-fuzz/obj/gen/%.o: $(BUILD)/gen/%.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c -o $@ $<
build-fuzz/obj/%.o: %.c
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -MMD -MP -c -o $@ $<
build-fuzz/%: tests/fuzz/%.c $(FUZZ_OBJ)
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $< $(FUZZ_OBJ) -lseccomp -ljansson -lpcre2-8 -lmicrohttpd -lgnutls -lcrypto -lsodium -lsqlite3 -lpthread -lm
# the configuration file's reader is the command's (src/cli), not the library's
build-fuzz/fuzz_config: tests/fuzz/fuzz_config.c $(FUZZ_OBJ) build-fuzz/obj/src/cli/config.o \
                        build-fuzz/obj/src/cli/opts.o
	@mkdir -p $(dir $@)
	clang $(FUZZ_CFLAGS) -fsanitize=fuzzer -o $@ $^ -linih -lseccomp -ljansson -lpcre2-8 -lmicrohttpd -lgnutls -lcrypto -lsodium -lsqlite3 -lpthread -lm
.SECONDARY: $(FUZZ_OBJ)
-include $(FUZZ_OBJ:.o=.d)

# Static analysis with the configurations kept in the repository.
lint: $(GEN_SRC)
	cppcheck --quiet --error-exitcode=1 --enable=warning,performance,portability \
	  --std=c11 -D_GNU_SOURCE -Iinclude -Isrc --suppress=missingIncludeSystem \
	  --suppress=unknownMacro \
	  --inline-suppr src tools tests/unit
	@TIDY_ANALYZER=1 scripts/tidy.sh

clean:
	rm -rf build build-asan build-fuzz

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)
