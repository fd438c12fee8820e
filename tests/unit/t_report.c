/*
 * lib/report: training logs and kg-eval reports read back exactly, bad
 * ones rejected with file:line, the gnuplot scripts' data equal to what
 * was read, and the renderer's atomic outputs (missing or failing
 * gnuplot, existing outputs, signals).
 */
#include <dirent.h>
#include <signal.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/util.h"
#include "report/evalreport.h"
#include "report/plot.h"
#include "report/render.h"
#include "report/trainlog.h"
#include "test.h"

static const char shallow_log[] =
    "{\"epoch\": 1, \"step\": 6, \"loss\": 0.710752736, \"seconds\": 0.014, "
    "\"triples_per_second\": 366703.4}\n"
    "{\"epoch\": 2, \"step\": 12, \"loss\": 0.628754617, \"seconds\": 0.031, "
    "\"triples_per_second\": 165757.8, \"valid_mrr\": 0.286898}\n"
    "\n"
    "{\"epoch\": 3, \"step\": 18, \"loss\": 0.54532587, \"seconds\": 0.026}\n"
    "{\"epoch\": 4, \"step\": 24, \"loss\": 0.504755294, \"seconds\": 0.014, "
    "\"valid_mrr\": 0.467958}";

static const char bucket_log[] =
    "{\"epoch\": 1, \"round\": 0, \"rank\": 0, \"bucket\": [0, 0], "
    "\"triples\": 391, \"loss\": 0.76955425, \"seconds\": 0.0008}\n"
    "{\"epoch\": 1, \"round\": 0, \"rank\": 1, \"bucket\": [1, 1], "
    "\"triples\": 353, \"loss\": 0.72, \"seconds\": 0.0004}\n"
    "{\"epoch\": 1, \"loss\": 0.715166067, \"seconds\": 0.004, "
    "\"ranks\": 2, \"bytes_sent\": 46832}\n"
    "{\"epoch\": 2, \"round\": 0, \"rank\": 0, \"bucket\": [0, 1], "
    "\"triples\": 380, \"loss\": 0.7, \"seconds\": 0.0004}\n"
    "{\"epoch\": 2, \"loss\": 0.657064812, \"seconds\": 0.003, "
    "\"ranks\": 2, \"bytes_sent\": 51456}\n";

static const char report_json[] =
    "{\"model\": \"ComplEx\", \"dataset\": \"umls\", \"split\": \"test\",\n"
    " \"setting\": \"filtered\",\n"
    " \"metrics\": {\n"
    "  \"both\": {\"n\": 6, \"mrr\": 0.5, \"mr\": 3, \"hits@1\": 0.25,\n"
    "           \"hits@3\": 0.5, \"hits@10\": 1},\n"
    "  \"head\": {\"n\": 3, \"mrr\": 0.4, \"mr\": 3, \"hits@1\": 0.2,\n"
    "           \"hits@3\": 0.4, \"hits@10\": 0.9},\n"
    "  \"tail\": {\"n\": 3, \"mrr\": 0.6, \"mr\": 3, \"hits@1\": 0.3,\n"
    "           \"hits@3\": 0.6, \"hits@10\": 0.95}},\n"
    " \"per_relation\": [\n"
    "  {\"relation\": 4, \"name\": \"it's \\\"x\\\"\",\n"
    "   \"both\": {\"n\": 2, \"mrr\": 0.125, \"mr\": 1, \"hits@1\": 0,\n"
    "            \"hits@3\": 0.5, \"hits@10\": 0.75},\n"
    "   \"head\": {\"n\": 0, \"mrr\": null, \"mr\": null, \"hits@1\": null,\n"
    "            \"hits@3\": null, \"hits@10\": null},\n"
    "   \"tail\": {\"n\": 2, \"mrr\": 0.125, \"mr\": 1, \"hits@1\": 0,\n"
    "            \"hits@3\": 0.5, \"hits@10\": 0.75}},\n"
    "  {\"relation\": 7,\n"
    "   \"both\": {\"n\": 4, \"mrr\": 1, \"mr\": 1, \"hits@1\": 1,\n"
    "            \"hits@3\": 1, \"hits@10\": 1},\n"
    "   \"head\": {\"n\": 2, \"mrr\": 1, \"mr\": 1, \"hits@1\": 1,\n"
    "            \"hits@3\": 1, \"hits@10\": 1},\n"
    "   \"tail\": {\"n\": 2, \"mrr\": 1, \"mr\": 1, \"hits@1\": 1,\n"
    "            \"hits@3\": 1, \"hits@10\": 1}}]}\n";

static void
t_log_shallow(void)
{
	struct kg_trainlog log;
	static const double loss[] = {
		0.710752736, 0.628754617, 0.54532587, 0.504755294
	};
	static const double wall[] = { 0.014, 0.045, 0.071, 0.085 };
	size_t i;

	T_CHECK(kg_trainlog_parse(&log, shallow_log, strlen(shallow_log),
	    "log") == 0);
	T_CHECK(log.n == 4 && log.n_valid == 2 && log.has_wall);
	for (i = 0; i < log.n && i < 4; i++) {
		T_CHECK(log.epoch[i] == i + 1);
		T_CHECK(log.loss[i] == loss[i]);
		T_NEAR(log.wall[i], wall[i], 1e-12);
	}
	T_CHECK(isnan(log.valid[0]) && isnan(log.valid[2]));
	T_CHECK(log.valid[1] == 0.286898 && log.valid[3] == 0.467958);
	kg_trainlog_release(&log);
	T_CHECK(log.n == 0 && log.loss == NULL);
	kg_trainlog_release(&log);
}

/* The bucket trainer's detail lines are skipped, its epoch lines read. */
static void
t_log_buckets(void)
{
	struct kg_trainlog log;

	T_CHECK(kg_trainlog_parse(&log, bucket_log, strlen(bucket_log),
	    "log") == 0);
	T_CHECK(log.n == 2 && log.n_valid == 0 && log.has_wall);
	if (log.n == 2) {
		T_CHECK(log.loss[0] == 0.715166067 &&
		    log.loss[1] == 0.657064812);
		T_NEAR(log.wall[1], 0.007, 1e-12);
	}
	kg_trainlog_release(&log);
}

/* One line without "seconds": no times at all. */
static void
t_log_without_seconds(void)
{
	static const char text[] = "{\"epoch\": 1, \"loss\": 2}\n"
	    "{\"epoch\": 2, \"loss\": 1, \"seconds\": 0.5}\n";
	struct kg_trainlog log;

	T_CHECK(kg_trainlog_parse(&log, text, strlen(text), "log") == 0);
	T_CHECK(log.n == 2 && !log.has_wall);
	T_CHECK(log.n == 2 && isnan(log.wall[0]) && isnan(log.wall[1]));
	kg_trainlog_release(&log);
}

static void
t_log_rejects(void)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "", "x.jsonl: no epochs" },
		{ "\n  \n", "x.jsonl: no epochs" },
		{ "{\"epoch\": 1, \"bucket\": [0, 0], \"loss\": 1}\n",
		    "x.jsonl: no epochs" },
		{ "{\"epoch\": 1, \"loss\": 1}\nnot json\n",
		    "x.jsonl:2: not a JSON object" },
		{ "[1, 2]\n", "x.jsonl:1: not a JSON object" },
		{ "{\"epoch\": 1, \"loss\": 1", "x.jsonl:1: not a JSON object" },
		{ "{\"loss\": 1}\n", "x.jsonl:1: no positive integer" },
		{ "{\"epoch\": 0, \"loss\": 1}\n", "x.jsonl:1: no positive" },
		{ "{\"epoch\": 1.5, \"loss\": 1}\n", "x.jsonl:1: no positive" },
		{ "{\"epoch\": 1}\n", "x.jsonl:1: no number \"loss\"" },
		{ "{\"epoch\": 1, \"loss\": \"0.5\"}\n", "x.jsonl:1: no number" },
		{ "{\"epoch\": 2, \"loss\": 1}\n{\"epoch\": 2, \"loss\": 1}\n",
		    "x.jsonl:2: epoch 2 after epoch 2" },
		{ "{\"epoch\": 1, \"loss\": 1, \"seconds\": -1}\n",
		    "x.jsonl:1: \"seconds\" is not a number" },
		{ "{\"epoch\": 1, \"loss\": 1, \"valid_mrr\": 1.5}\n",
		    "x.jsonl:1: \"valid_mrr\" is not a number in [0, 1]" },
	};
	struct kg_trainlog log;
	size_t i;

	kg_error_mute(1);
	for (i = 0; i < KG_ARRAY_LEN(bad); i++) {
		int rc = kg_trainlog_parse(&log, bad[i].text,
		    strlen(bad[i].text), "x.jsonl");

		T_CHECKF(rc == -1 && log.n == 0 && log.epoch == NULL,
		    "case %zu accepted", i);
		T_CHECKF(strstr(kg_error_last(), bad[i].msg) ==
		    kg_error_last(), "case %zu: '%s', wanted '%s'", i,
		    kg_error_last(), bad[i].msg);
	}
	kg_error_mute(0);
}

static void
t_report_read(void)
{
	struct kg_evalreport rep;
	const struct kg_evalrow *r;

	T_CHECK(kg_evalreport_is_report(report_json, strlen(report_json)));
	T_CHECK(!kg_evalreport_is_report(shallow_log, strlen(shallow_log)));
	T_CHECK(!kg_evalreport_is_report(shallow_log, strchr(shallow_log,
	    '\n') - shallow_log));
	{
		static const char cut[] = "\n{\n \"metrics\": {";
		static const char log1[] = "{\"epoch\": 1,\n";

		T_CHECK(kg_evalreport_is_report(cut, strlen(cut)));
		T_CHECK(!kg_evalreport_is_report(log1, strlen(log1)));
	}
	T_CHECK(kg_evalreport_parse(&rep, report_json, strlen(report_json),
	    "r.json") == 0);
	T_CHECK(rep.n_rows == 3);
	if (rep.n_rows != 3)
		return;
	T_CHECK(strcmp(rep.model, "ComplEx") == 0 && rep.encoder == NULL &&
	    strcmp(rep.setting, "filtered") == 0);
	r = rep.rows;
	T_CHECK(strcmp(r[0].name, "(all)") == 0 && r[0].n[KG_DIR_BOTH] == 6);
	T_CHECK(r[0].m[KG_DIR_HEAD][KG_MET_MRR] == 0.4 &&
	    r[0].m[KG_DIR_TAIL][KG_MET_HITS10] == 0.95 &&
	    r[0].m[KG_DIR_BOTH][KG_MET_HITS1] == 0.25);
	T_CHECK(strcmp(r[1].name, "it's \"x\"") == 0);
	T_CHECK(r[1].n[KG_DIR_HEAD] == 0 &&
	    isnan(r[1].m[KG_DIR_HEAD][KG_MET_MRR]) &&
	    r[1].m[KG_DIR_TAIL][KG_MET_HITS3] == 0.5);
	T_CHECK(strcmp(r[2].name, "relation 7") == 0);
	kg_evalreport_release(&rep);
	T_CHECK(rep.n_rows == 0 && rep.rows == NULL && rep.model == NULL);
}

static void
t_report_rejects(void)
{
	static const struct {
		const char *text, *msg;
	} bad[] = {
		{ "{\"metrics\": 1}", "r.json: not a kg-eval report" },
		{ "{\n\"metrics\": {\n", "r.json:3:" },
		{ "{\"metrics\": {\"both\": {}, \"head\": {}, \"tail\": {}}}",
		    "r.json: metrics.both: no count \"n\"" },
		{ "{\"metrics\": {\"both\": {\"n\": 1, \"mrr\": 1, "
		    "\"hits@1\": 1, \"hits@3\": 1, \"hits@10\": 1}}}",
		    "r.json: metrics: no object \"head\"" },
		{ "{\"metrics\": {\"both\": {\"n\": 1, \"mrr\": 2, "
		    "\"hits@1\": 1, \"hits@3\": 1, \"hits@10\": 1}}}",
		    "r.json: metrics.both: \"mrr\" is not a number in [0, 1]" },
		{ "{\"metrics\": {\"both\": {\"n\": 1, \"mrr\": 1, "
		    "\"hits@1\": 1, \"hits@3\": 1}}}",
		    "r.json: metrics.both: \"hits@10\" is not a number" },
	};
	struct kg_evalreport rep;
	size_t i;

	kg_error_mute(1);
	for (i = 0; i < KG_ARRAY_LEN(bad); i++) {
		int rc = kg_evalreport_parse(&rep, bad[i].text,
		    strlen(bad[i].text), "r.json");

		T_CHECKF(rc == -1 && rep.n_rows == 0 && rep.rows == NULL,
		    "case %zu accepted", i);
		T_CHECKF(strstr(kg_error_last(), bad[i].msg) ==
		    kg_error_last(), "case %zu: '%s', wanted '%s'", i,
		    kg_error_last(), bad[i].msg);
	}
	kg_error_mute(0);
}

/*
 * The rows of datablock name in script, each parsed into up to 16
 * numbers (NaN for "NaN"); returns the row count.
 */
static size_t
datablock(const char *script, const char *name, double rows[][16],
    size_t max_rows, size_t *ncols)
{
	char head[64];
	const char *p;
	size_t n = 0;

	snprintf(head, sizeof(head), "\n%s << EOD\n", name);
	p = strstr(script, head);
	if (p == NULL)
		return 0;
	p += strlen(head);
	while (strncmp(p, "EOD\n", 4) != 0 && n < max_rows) {
		char *end;
		size_t c = 0;

		while (*p != '\n' && *p != '\0' && c < 16) {
			rows[n][c++] = strtod(p, &end);
			p = end;
			while (*p == '\t')
				p++;
		}
		*ncols = c;
		if (*p != '\n')
			break;
		p++;
		n++;
	}
	return n;
}

static size_t
count(const char *s, const char *what)
{
	size_t n = 0;

	while ((s = strstr(s, what)) != NULL) {
		n++;
		s += strlen(what);
	}
	return n;
}

static void
t_log_script(void)
{
	struct kg_trainlog log;
	struct kg_plot_opts o = KG_PLOT_OPTS_INIT;
	struct kg_plot_target t[2] = {
		{ "a'b.png", KG_PLOT_PNG }, { "c.svg", KG_PLOT_SVG }
	};
	struct kg_strbuf sb = { NULL, 0, 0 };
	double rows[8][16];
	size_t n, nc = 0, i;

	kg_trainlog_parse(&log, shallow_log, strlen(shallow_log), "log");
	o.title = "it's";
	o.targets = t;
	o.n_targets = 2;
	kg_plot_log_script(&sb, &log, &o);
	n = datablock(sb.s, "$loss", rows, 8, &nc);
	T_CHECK(n == 4 && nc == 3);
	for (i = 0; i < n; i++) {
		T_CHECK(rows[i][0] == log.epoch[i]);
		T_NEAR(rows[i][1], log.wall[i], 1e-9);
		T_CHECK(rows[i][2] == log.loss[i]);
	}
	n = datablock(sb.s, "$valid", rows, 8, &nc);
	T_CHECK(n == 2 && rows[0][0] == 2 && rows[0][2] == 0.286898 &&
	    rows[1][0] == 4 && rows[1][2] == 0.467958);
	/* Two targets, four panels each; quotes doubled. */
	T_CHECK(count(sb.s, "set output ") == 2 &&
	    count(sb.s, "unset output") == 2);
	T_CHECK(count(sb.s, "\nplot ") == 8);
	T_CHECK(strstr(sb.s, "set output 'a''b.png'\n") != NULL);
	T_CHECK(strstr(sb.s, "title 'it''s'\n") != NULL);
	T_CHECK(strstr(sb.s, "set terminal svg size 1200,800 ") != NULL);
	free(sb.s);
	/* No targets: no terminal; no seconds: no time panels. */
	memset(&sb, 0, sizeof(sb));
	log.has_wall = 0;
	o.n_targets = 0;
	kg_plot_log_script(&sb, &log, &o);
	T_CHECK(strstr(sb.s, "set terminal") == NULL &&
	    strstr(sb.s, "set output") == NULL);
	T_CHECK(count(sb.s, "\nplot ") == 2 &&
	    strstr(sb.s, "layout 2,1") != NULL);
	free(sb.s);
	kg_trainlog_release(&log);
}

static void
t_report_script(void)
{
	struct kg_evalreport rep;
	struct kg_plot_opts o = KG_PLOT_OPTS_INIT;
	struct kg_plot_target t = { "r.svg", KG_PLOT_SVG };
	struct kg_strbuf sb = { NULL, 0, 0 };
	double rows[8][16];
	size_t n, nc = 0, i;
	int s, k;

	kg_evalreport_parse(&rep, report_json, strlen(report_json), "r");
	o.targets = &t;
	o.n_targets = 1;
	o.sides = (1u << KG_DIR_HEAD) | (1u << KG_DIR_TAIL);
	kg_plot_report_script(&sb, &rep, &o);
	n = datablock(sb.s, "$rel", rows, 8, &nc);
	T_CHECK(n == 3 && nc == 2 + KG_DIRS * KG_METRICS);
	for (i = 0; i < n && i < rep.n_rows; i++) {
		T_CHECK(rows[i][0] == (double)i &&
		    rows[i][1] == (double)rep.rows[i].n[KG_DIR_BOTH]);
		for (s = 0; s < KG_DIRS; s++)
			for (k = 0; k < KG_METRICS; k++) {
				double want = rep.rows[i].m[s][k];
				double got = rows[i][2 + KG_METRICS * s + k];

				T_CHECK(isnan(want) ? isnan(got) : got == want);
			}
	}
	T_CHECK(strstr(sb.s, "array names[3] = ['(all)', 'it''s \"x\"', "
	    "'relation 7']\n") != NULL);
	/* Two panels of four series. */
	T_CHECK(count(sb.s, "\nplot ") == 2 && count(sb.s, "title 'MRR'") == 2);
	T_CHECK(strstr(sb.s, "both directions") == NULL);
	free(sb.s);
	kg_evalreport_release(&rep);
}

static void
t_quote_and_format(void)
{
	char *q = kg_plot_quote("a'b\nc");
	enum kg_plot_format f = KG_PLOT_PNG;

	T_CHECK(strcmp(q, "'a''b c'") == 0);
	free(q);
	T_CHECK(kg_plot_format_of("x/y.svg", &f) == 1 && f == KG_PLOT_SVG);
	T_CHECK(kg_plot_format_of("Y.PNG", &f) == 1 && f == KG_PLOT_PNG);
	T_CHECK(kg_plot_format_of("plot", &f) == 0);
	T_CHECK(kg_plot_format_of(".png", &f) == 0);
	T_CHECK(kg_plot_format_of("run.v2", &f) == 0);
}

static size_t
count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	size_t n = 0;

	if (d == NULL)
		return SIZE_MAX;
	while ((e = readdir(d)) != NULL)
		if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
			n++;
	closedir(d);
	return n;
}

/* A fresh empty directory under the test's scratch directory. */
static char *
fresh_dir(const char *name)
{
	char *d = kg_path_join(t_tmpdir(), name);

	mkdir(d, 0755);
	return d;
}

static int
have_gnuplot(void)
{
	return system("command -v gnuplot >/dev/null 2>&1") == 0;
}

/* gnuplot missing or failing: an error naming it, nothing left. */
static void
t_render_failures(void)
{
	static const char *const progs[] = { "/nonexistent/gnuplot", "false" };
	static const char *const msgs[] = { "gnuplot not found", "failed" };
	char *dir = fresh_dir("fail");
	char *out = kg_path_join(dir, "x.png");
	const char *outs[1] = { out }, *ext[1] = { "png" };
	struct kg_render r;
	size_t i;

	kg_error_mute(1);
	for (i = 0; i < KG_ARRAY_LEN(progs); i++) {
		setenv("GNUPLOT", progs[i], 1);
		T_CHECK(kg_render_begin(&r, outs, ext, 1, 0) == 0);
		T_CHECK(count_entries(dir) == 1);
		T_CHECK(kg_render_run(&r, "print 1\n") == -1);
		T_CHECKF(strstr(kg_error_last(), msgs[i]) != NULL, "'%s'",
		    kg_error_last());
		T_CHECK(count_entries(dir) == 0 && r.dir == NULL);
	}
	unsetenv("GNUPLOT");
	kg_error_mute(0);
	free(out);
	free(dir);
}

/* A real gnuplot writes a PNG; an existing output needs force. */
static void
t_render_png(void)
{
	static const unsigned char sig[8] = {
		0x89, 'P', 'N', 'G', '\r', '\n', 0x1a, '\n'
	};
	char *dir = fresh_dir("png");
	char *out = kg_path_join(dir, "x.png");
	const char *outs[1] = { out }, *ext[1] = { "png" };
	struct kg_render r;
	unsigned char head[8] = { 0 };
	char *script;
	FILE *f;

	if (!have_gnuplot())
		T_SKIP("gnuplot not installed");
	T_CHECK(kg_render_begin(&r, outs, ext, 1, 0) == 0);
	script = kg_xasprintf("set terminal png size 200,100\n"
	    "set output '%s'\nplot x\n", r.tmp[0]);
	T_CHECK(kg_render_run(&r, script) == 0);
	free(script);
	f = fopen(out, "rb");
	T_CHECK(f != NULL && fread(head, 1, 8, f) == 8);
	if (f != NULL)
		fclose(f);
	T_CHECK(memcmp(head, sig, 8) == 0);
	T_CHECK(count_entries(dir) == 1);
	kg_error_mute(1);
	T_CHECK(kg_render_begin(&r, outs, ext, 1, 0) == -1);
	T_CHECK(strstr(kg_error_last(), "exists; use --force") != NULL);
	kg_error_mute(0);
	T_CHECK(kg_render_begin(&r, outs, ext, 1, 1) == 0);
	kg_render_abort(&r);
	kg_render_abort(&r);
	T_CHECK(count_entries(dir) == 1);
	free(out);
	free(dir);
}

/* A signal during a render removes its temporary directory. */
static void
t_render_signal(void)
{
	char *dir = fresh_dir("sig");
	char *out = kg_path_join(dir, "x.svg");
	int status;
	pid_t pid;

	pid = fork();
	if (pid == 0) {
		const char *outs[1] = { out }, *ext[1] = { "svg" };
		struct kg_render r;

		if (kg_render_begin(&r, outs, ext, 1, 0) < 0 ||
		    kg_write_text(r.dir, "plot.gp", "x") < 0)
			_exit(3);
		raise(SIGTERM);
		_exit(4);
	}
	waitpid(pid, &status, 0);
	T_CHECK(WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM);
	T_CHECK(count_entries(dir) == 0);
	free(out);
	free(dir);
}

int
main(void)
{
	T_RUN(t_log_shallow);
	T_RUN(t_log_buckets);
	T_RUN(t_log_without_seconds);
	T_RUN(t_log_rejects);
	T_RUN(t_report_read);
	T_RUN(t_report_rejects);
	T_RUN(t_log_script);
	T_RUN(t_report_script);
	T_RUN(t_quote_and_format);
	T_RUN(t_render_failures);
	T_RUN(t_render_png);
	T_RUN(t_render_signal);
	return T_DONE();
}
