/*
 * embed: the approval console's static files (console/) compiled into the
 * binary, so that `toolgate serve` needs nothing installed beside it and
 * the browser fetches nothing from elsewhere (docs/CONSOLE.md).
 *
 *   embed OUT.c NAME=FILE...
 *
 * writes a C file defining console_files[] (src/mcp/console_files.h): each
 * file's name under /console/, its media type (from its extension: only
 * the types the console uses), its bytes and a strong ETag (FNV-1a 64 of
 * the bytes). It refuses a file of another type, or over 1 MiB.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILE (1u << 20)

static const char *type_of(const char *name)
{
	static const struct {
		const char *ext, *type;
	} types[] = {
		{ ".html", "text/html; charset=utf-8" },
		{ ".js", "text/javascript; charset=utf-8" },
		{ ".css", "text/css; charset=utf-8" },
		{ ".svg", "image/svg+xml" },
	};
	const char *dot = strrchr(name, '.');
	size_t i;

	for (i = 0; dot && i < sizeof(types) / sizeof(types[0]); i++)
		if (strcmp(dot, types[i].ext) == 0)
			return types[i].type;
	return NULL;
}

static unsigned char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *buf = f ? malloc(MAX_FILE + 1) : NULL;

	if (!buf) {
		if (f)
			fclose(f);
		return NULL;
	}
	*len = fread(buf, 1, MAX_FILE + 1, f);
	if (ferror(f) || *len > MAX_FILE) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	return buf;
}

int main(int argc, char **argv)
{
	FILE *out;
	size_t *lens = argc > 2 ? calloc((size_t)argc, sizeof(*lens)) : NULL;
	uint64_t *hashes = argc > 2 ? calloc((size_t)argc, sizeof(*hashes)) : NULL;
	int i;

	if (argc < 3 || !lens || !hashes) {
		fprintf(stderr, "usage: embed OUT.c NAME=FILE...\n");
		return 2;
	}
	out = fopen(argv[1], "w");
	if (!out) {
		fprintf(stderr, "embed: %s: %s\n", argv[1], strerror(errno));
		return 1;
	}
	fprintf(out, "/* written by tools/embed.c from console/: do not edit */\n"
		     "#include \"mcp/console_files.h\"\n\n");
	/* each file read once: its bytes written, its length and hash kept
	 * for the table */
	for (i = 2; i < argc; i++) {
		size_t len, j;
		unsigned char *buf = slurp(strchr(argv[i], '=') ? strchr(argv[i], '=') + 1 : "",
					   &len);
		uint64_t h = 14695981039346656037ull;

		if (!strchr(argv[i], '=') || !buf || !type_of(argv[i])) {
			fprintf(stderr, "embed: %s: want NAME=FILE, a readable .html, .js, .css "
				"or .svg file of at most 1 MiB\n", argv[i]);
			free(buf);
			fclose(out);
			remove(argv[1]);
			return 1;
		}
		fprintf(out, "static const unsigned char file%d[] = {", i);
		for (j = 0; j < len; j++) {
			fprintf(out, "%s%u,", j % 20 ? "" : "\n\t", buf[j]);
			h = (h ^ buf[j]) * 1099511628211ull;
		}
		fprintf(out, "\n\t0\n};\n\n");
		free(buf);
		lens[i] = len;
		hashes[i] = h;
	}
	fprintf(out, "const struct console_file console_files[] = {\n");
	for (i = 2; i < argc; i++)
		fprintf(out, "\t{ \"%.*s\", \"%s\", file%d, %zu, \"\\\"%016llx\\\"\" },\n",
			(int)(strchr(argv[i], '=') - argv[i]), argv[i], type_of(argv[i]), i, lens[i],
			(unsigned long long)hashes[i]);
	fprintf(out, "\t{ 0, 0, 0, 0, 0 },\n};\n");
	free(lens);
	free(hashes);
	if (fclose(out) != 0) {
		fprintf(stderr, "embed: %s: %s\n", argv[1], strerror(errno));
		remove(argv[1]);
		return 1;
	}
	return 0;
}
