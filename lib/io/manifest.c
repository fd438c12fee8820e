#include "io/manifest.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "io/npy.h"
#include "core/util.h"

#define MANIFEST_NAME "manifest.json"

int
kg_checksum_file(const char *path, char out[32])
{
	XXH3_state_t *st;
	char *buf;
	ssize_t n;
	int fd, rc = 0;
	size_t cap = 1 << 20;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		kg_error_errno("cannot open '%s'", path);
		return -1;
	}
	st = XXH3_createState();
	if (st == NULL) {
		close(fd);
		kg_error("out of memory");
		return -1;
	}
	XXH3_64bits_reset(st);
	buf = kg_xmalloc(cap);
	for (;;) {
		n = read(fd, buf, cap);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			kg_error_errno("cannot read '%s'", path);
			rc = -1;
			break;
		}
		if (n == 0)
			break;
		XXH3_64bits_update(st, buf, (size_t)n);
	}
	if (rc == 0)
		snprintf(out, 32, "xxh3-64:%016llx",
		    (unsigned long long)XXH3_64bits_digest(st));
	XXH3_freeState(st);
	free(buf);
	close(fd);
	return rc;
}

static void
set_new(json_t *obj, const char *key, json_t *v)
{
	json_object_set_new(obj, key, v);
}

void
kg_manifest_init(struct kg_manifest *m, int argc, char *const argv[])
{
	json_t *args = json_array();
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	int i;

	m->root = json_object();
	set_new(m->root, "format", json_string("kgpipe"));
	set_new(m->root, "format_version", json_integer(KG_FORMAT_VERSION));
	set_new(m->root, "tool", json_string(kg_progname()));
	set_new(m->root, "tool_version", json_string(KG_VERSION));
	for (i = 0; i < argc; i++)
		json_array_append_new(args, json_string(argv[i]));
	set_new(m->root, "argv", args);
	gmtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%SZ", &tm);
	set_new(m->root, "created", json_string(stamp));
	set_new(m->root, "inputs", json_array());
	set_new(m->root, "files", json_object());
	set_new(m->root, "config", json_object());
	set_new(m->root, "figures", json_object());
}

void
kg_manifest_release(struct kg_manifest *m)
{
	if (m->root)
		json_decref(m->root);
	m->root = NULL;
}

int
kg_manifest_add_input(struct kg_manifest *m, const char *role,
    const char *dir)
{
	struct kg_manifest in = KG_MANIFEST_INIT;
	char sum[32];
	char *path;
	json_t *entry, *tool;
	int rc;

	rc = kg_manifest_load(&in, dir, NULL);
	if (rc < 0)
		return rc;
	path = kg_path_join(dir, MANIFEST_NAME);
	rc = kg_checksum_file(path, sum);
	free(path);
	if (rc < 0) {
		kg_manifest_release(&in);
		return -1;
	}
	entry = json_object();
	set_new(entry, "role", json_string(role));
	set_new(entry, "path", json_string(dir));
	tool = json_object_get(in.root, "tool");
	set_new(entry, "tool", json_string(json_is_string(tool) ?
	    json_string_value(tool) : "unknown"));
	set_new(entry, "checksum", json_string(sum));
	json_array_append_new(json_object_get(m->root, "inputs"), entry);
	kg_manifest_release(&in);
	return 0;
}

static json_t *
shape_json(int ndim, const uint64_t *shape)
{
	json_t *a = json_array();
	int i;

	for (i = 0; i < ndim; i++)
		json_array_append_new(a, json_integer((json_int_t)shape[i]));
	return a;
}

static int
has_suffix(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && strcmp(s + n - k, suffix) == 0;
}

int
kg_manifest_add_file(struct kg_manifest *m, const char *dir,
    const char *name)
{
	char *path = kg_path_join(dir, name);
	char sum[32];
	struct stat st;
	json_t *entry;

	if (stat(path, &st) != 0) {
		kg_error_errno("cannot stat '%s'", path);
		free(path);
		return -1;
	}
	entry = json_object();
	if (has_suffix(name, ".npy")) {
		enum kg_dtype dt;
		int ndim;
		uint64_t shape[KG_NPY_MAXDIM];
		size_t off;

		if (kg_npy_read_header(path, &dt, &ndim, shape, &off) < 0) {
			json_decref(entry);
			free(path);
			return -1;
		}
		set_new(entry, "dtype", json_string(kg_dtype_descr(dt)));
		set_new(entry, "shape", shape_json(ndim, shape));
	}
	if (kg_checksum_file(path, sum) < 0) {
		json_decref(entry);
		free(path);
		return -1;
	}
	set_new(entry, "bytes", json_integer((json_int_t)st.st_size));
	set_new(entry, "checksum", json_string(sum));
	set_new(json_object_get(m->root, "files"), name, entry);
	free(path);
	return 0;
}

int
kg_manifest_put_npy(struct kg_manifest *m, const char *dir,
    const char *name, enum kg_dtype dt, int ndim, const uint64_t *shape,
    const void *data)
{
	char *path = kg_path_join(dir, name);
	int rc = kg_npy_write(path, dt, ndim, shape, data);

	free(path);
	if (rc == 0 && m != NULL)
		rc = kg_manifest_add_file(m, dir, name);
	return rc;
}

/* Byte order, whatever the locale (alphasort follows LC_COLLATE). */
static int
name_order(const struct dirent **a, const struct dirent **b)
{
	return strcmp((*a)->d_name, (*b)->d_name);
}

int
kg_manifest_add_dir(struct kg_manifest *m, const char *dir)
{
	struct dirent **list;
	int i, n, rc = 0;

	n = scandir(dir, &list, NULL, name_order);
	if (n < 0) {
		kg_error_errno("cannot list '%s'", dir);
		return -1;
	}
	for (i = 0; i < n; i++) {
		if (rc == 0 && list[i]->d_name[0] != '.' &&
		    strcmp(list[i]->d_name, "manifest.json") != 0)
			rc = kg_manifest_add_file(m, dir, list[i]->d_name);
		free(list[i]);
	}
	free(list);
	return rc;
}

void
kg_manifest_set_config(struct kg_manifest *m, const char *key,
    json_t *value)
{
	set_new(json_object_get(m->root, "config"), key, value);
}

void
kg_manifest_set_figure(struct kg_manifest *m, const char *key,
    json_t *value)
{
	set_new(json_object_get(m->root, "figures"), key, value);
}

void
kg_manifest_set_figure_u64(struct kg_manifest *m, const char *key,
    uint64_t v)
{
	kg_manifest_set_figure(m, key, json_integer((json_int_t)v));
}

json_t *
kg_json_u64_array(const uint64_t *x, uint64_t n)
{
	json_t *a = json_array();
	uint64_t i;

	for (i = 0; i < n; i++)
		json_array_append_new(a, json_integer((json_int_t)x[i]));
	return a;
}

int
kg_manifest_write(const struct kg_manifest *m, const char *dir)
{
	char *path = kg_path_join(dir, MANIFEST_NAME);
	char *text = json_dumps(m->root, JSON_INDENT(2) | JSON_SORT_KEYS);
	FILE *f;
	int rc = 0;

	if (text == NULL) {
		kg_error("cannot encode manifest");
		free(path);
		return -1;
	}
	f = fopen(path, "w");
	if (f == NULL) {
		kg_error_errno("cannot create '%s'", path);
		free(text);
		free(path);
		return -1;
	}
	if (fputs(text, f) == EOF || fputc('\n', f) == EOF ||
	    fflush(f) != 0 || fsync(fileno(f)) != 0)
		rc = -1;
	if (fclose(f) != 0)
		rc = -1;
	if (rc < 0) {
		kg_error_errno("cannot write '%s'", path);
		unlink(path);
	}
	free(text);
	free(path);
	return rc;
}

int
kg_manifest_load(struct kg_manifest *m, const char *dir, const char *tool)
{
	char *path = kg_path_join(dir, MANIFEST_NAME);
	json_error_t jerr;
	json_t *root, *v;
	struct stat st;

	m->root = NULL;
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		kg_error("'%s' is not a directory", dir);
		free(path);
		return -1;
	}
	if (!kg_path_exists(path)) {
		kg_error("'%s' has no %s: not a kgpipe output directory", dir,
		    MANIFEST_NAME);
		free(path);
		return -1;
	}
	root = json_load_file(path, 0, &jerr);
	if (root == NULL) {
		kg_error("%s:%d: %s", path, jerr.line, jerr.text);
		free(path);
		return -1;
	}
	if (!json_is_object(root) ||
	    !json_is_string(json_object_get(root, "format")) ||
	    strcmp(json_string_value(json_object_get(root, "format")),
	    "kgpipe") != 0) {
		kg_error("%s: not a kgpipe manifest", path);
		goto fail;
	}
	v = json_object_get(root, "format_version");
	if (!json_is_integer(v)) {
		kg_error("%s: format_version missing", path);
		goto fail;
	}
	if (json_integer_value(v) != KG_FORMAT_VERSION) {
		kg_error("%s: format version %lld is not known to this "
		    "kgpipe (%s reads version %d); re-run the stage that "
		    "wrote it", path, (long long)json_integer_value(v),
		    KG_VERSION, KG_FORMAT_VERSION);
		json_decref(root);
		free(path);
		return KG_ERR_VERSION;
	}
	v = json_object_get(root, "tool");
	if (tool != NULL && (!json_is_string(v) ||
	    strcmp(json_string_value(v), tool) != 0)) {
		kg_error("'%s' was written by %s, expected a %s output", dir,
		    json_is_string(v) ? json_string_value(v) : "an unknown "
		    "tool", tool);
		goto fail;
	}
	if (!json_is_object(json_object_get(root, "files"))) {
		kg_error("%s: no files listed", path);
		goto fail;
	}
	/* Older writers may lack the optional sections; add them empty. */
	if (!json_is_object(json_object_get(root, "config")))
		json_object_set_new(root, "config", json_object());
	if (!json_is_object(json_object_get(root, "figures")))
		json_object_set_new(root, "figures", json_object());
	m->root = root;
	free(path);
	return 0;
fail:
	json_decref(root);
	free(path);
	return -1;
}

/*
 * An entry of "files" as every writer makes it: an object with "bytes" (a
 * non-negative integer) and "checksum" (a string), and for a .npy file
 * "dtype" (a string) and "shape" (an array of non-negative integers).  A
 * reader trusts these to check the files, so a malformed entry is an
 * error naming the manifest and the key rather than a check skipped.
 */
/* A file name a manifest may list: relative, inside the directory ("a"
 * or "sub/a"), with no empty, "." or ".." component. */
static int
plain_name(const char *name)
{
	const char *p = name;

	if (*p == '\0' || *p == '/')
		return 0;
	while (*p != '\0') {
		size_t len = strcspn(p, "/");

		if (len == 0 || (len == 1 && p[0] == '.') ||
		    (len == 2 && p[0] == '.' && p[1] == '.'))
			return 0;
		p += len;
		if (*p == '/')
			p++;
		if (*p == '\0' && p[-1] == '/')
			return 0;
	}
	return 1;
}

static int
check_entry(const char *mpath, const char *name, json_t *entry)
{
	json_t *v, *js;
	size_t i;
	const char *bad = NULL;

	if (!plain_name(name)) {
		kg_error("%s: files: '%s' is not a file name inside the "
		    "directory", mpath, name);
		return -1;
	}
	if (!json_is_object(entry)) {
		kg_error("%s: files.%s is not an object", mpath, name);
		return -1;
	}
	v = json_object_get(entry, "bytes");
	if (!json_is_integer(v) || json_integer_value(v) < 0)
		bad = "bytes";
	else if (!json_is_string(json_object_get(entry, "checksum")))
		bad = "checksum";
	else if (has_suffix(name, ".npy") &&
	    !json_is_string(json_object_get(entry, "dtype")))
		bad = "dtype";
	if (bad != NULL) {
		kg_error("%s: files.%s.%s is missing or not a%s", mpath, name,
		    bad, strcmp(bad, "bytes") == 0 ? " non-negative integer" :
		    " string");
		return -1;
	}
	if (!has_suffix(name, ".npy"))
		return 0;
	js = json_object_get(entry, "shape");
	if (!json_is_array(js) || json_array_size(js) > KG_NPY_MAXDIM) {
		kg_error("%s: files.%s.shape is missing or not an array of at "
		    "most %d sizes", mpath, name, KG_NPY_MAXDIM);
		return -1;
	}
	json_array_foreach(js, i, v)
		if (!json_is_integer(v) || json_integer_value(v) < 0) {
			kg_error("%s: files.%s.shape[%zu] is not a "
			    "non-negative integer", mpath, name, i);
			return -1;
		}
	return 0;
}

/* The .npy header against a checked entry: same dtype and shape. */
static int
verify_npy(const char *path, const char *name, json_t *entry)
{
	enum kg_dtype dt;
	int ndim, i;
	uint64_t shape[KG_NPY_MAXDIM];
	size_t off;
	json_t *jd = json_object_get(entry, "dtype");
	json_t *js = json_object_get(entry, "shape");
	int bad;

	if (kg_npy_read_header(path, &dt, &ndim, shape, &off) < 0)
		return -1;
	if (strcmp(json_string_value(jd), kg_dtype_descr(dt)) != 0) {
		kg_error("%s: dtype %s, the manifest says %s", path,
		    kg_dtype_descr(dt), json_string_value(jd));
		return -1;
	}
	bad = (int)json_array_size(js) != ndim;
	for (i = 0; !bad && i < ndim; i++)
		bad = (uint64_t)json_integer_value(json_array_get(js,
		    (size_t)i)) != shape[i];
	if (bad) {
		kg_error("%s: shape does not match the manifest entry for "
		    "'%s'", path, name);
		return -1;
	}
	return 0;
}

/* One file against its entry: present, size, header, checksum. */
static int
verify_file(const char *dir, const char *name, json_t *entry, int checksums)
{
	char *path = kg_path_join(dir, name);
	json_t *jb = json_object_get(entry, "bytes");
	json_t *jc = json_object_get(entry, "checksum");
	struct stat st;
	char sum[32];
	int rc = -1;

	if (stat(path, &st) != 0) {
		kg_error_errno("'%s' is listed in the manifest but cannot be "
		    "read", path);
		goto out;
	}
	if ((json_int_t)st.st_size != json_integer_value(jb)) {
		kg_error("%s: %lld bytes, the manifest says %lld%s", path,
		    (long long)st.st_size, (long long)json_integer_value(jb),
		    (json_int_t)st.st_size < json_integer_value(jb) ?
		    " (truncated?)" : "");
		goto out;
	}
	if (has_suffix(name, ".npy") && verify_npy(path, name, entry) < 0)
		goto out;
	if (checksums) {
		if (kg_checksum_file(path, sum) < 0)
			goto out;
		if (strcmp(sum, json_string_value(jc)) != 0) {
			kg_error("%s: checksum %s, the manifest says %s (file "
			    "changed or corrupt)", path, sum,
			    json_string_value(jc));
			goto out;
		}
	}
	rc = 0;
out:
	free(path);
	return rc;
}

int
kg_manifest_verify(const struct kg_manifest *m, const char *dir,
    int checksums)
{
	char *mpath = kg_path_join(dir, MANIFEST_NAME);
	const char *name;
	json_t *entry;
	int rc = 0;

	json_object_foreach(json_object_get(m->root, "files"), name, entry) {
		if (check_entry(mpath, name, entry) < 0 ||
		    verify_file(dir, name, entry, checksums) < 0) {
			rc = -1;
			break;
		}
	}
	free(mpath);
	return rc;
}

json_t *
kg_manifest_get(const struct kg_manifest *m, const char *path)
{
	char key[256];
	const char *p = path, *dot;
	json_t *v = m->root;

	while (v != NULL && *p != '\0') {
		size_t len;

		dot = strchr(p, '.');
		len = dot ? (size_t)(dot - p) : strlen(p);
		if (len >= sizeof(key))
			return NULL;
		memcpy(key, p, len);
		key[len] = '\0';
		v = json_object_get(v, key);
		p = dot ? dot + 1 : p + len;
	}
	return v;
}

int
kg_manifest_get_u64(const struct kg_manifest *m, const char *path,
    uint64_t *out)
{
	json_t *v = kg_manifest_get(m, path);

	if (!json_is_integer(v) || json_integer_value(v) < 0)
		return -1;
	*out = (uint64_t)json_integer_value(v);
	return 0;
}
