/*
 * train_job: the checks of a shallow training job's options; see
 * train_job.h.
 */
#include "kge/train_job.h"

#include "core/util.h"

int
kg_train_job_check(const struct kg_train_opts *o, const struct kg_train_job *j)
{
	if (j->target_mrr > 0.0 && j->valid_every == 0) {
		kg_error("--target_mrr needs --valid_every");
		return -1;
	}
	if (j->one_vs_all_plateau > 0 && j->valid_every == 0) {
		kg_error("--one_vs_all_plateau needs --valid_every");
		return -1;
	}
	if (o->ova_dura >= 0.0 && !o->one_vs_all && !o->one_vs_all_after &&
	    j->one_vs_all_plateau == 0) {
		kg_error("--one_vs_all_dura needs 1-vs-all epochs "
		    "(--one_vs_all, --one_vs_all_after or "
		    "--one_vs_all_plateau)");
		return -1;
	}
	if (j->one_vs_all_plateau > 0 && (o->one_vs_all ||
	    o->one_vs_all_after)) {
		kg_error("--one_vs_all_plateau decides when 1-vs-all begins; "
		    "drop %s", o->one_vs_all ? "--one_vs_all" :
		    "--one_vs_all_after");
		return -1;
	}
	return 0;
}
