#include "cli/train_help.h"

#include <string.h>

#include "core/util.h"

static const char synopsis[] =
"usage: kg-train [-q] [--config FILE] [--model_name NAME] [--hidden_dim N]\n"
"                [-de] [-dr] [--rel_dim N] [--gamma G] [--reciprocal]\n"
"                [--loss NAME] [--margin M] [-adv] [--adversarial_temperature T]\n"
"                [--batch_size N] [--neg_sample_size N] [--neg_chunk_size N]\n"
"                [--neg_sampler uniform|degree|mixed] [--neg_degree_fraction F]\n"
"                [--neg_filter] [--neg_types] [--one_vs_all]\n"
"                [--one_vs_all_after N] [--one_vs_all_plateau P]\n"
"                [--one_vs_all_grouped] [--subsampling_weight]\n"
"                [--lr LR]\n"
"                [--ent_optimizer O] [--rel_optimizer O] [--rel_lr LR]\n"
"                [--regularization_coef C] [--regularization_norm 2|3]\n"
"                [--init uniform|normal] [--init_scale S] [--max_grad_norm C]\n"
"                [--epochs N] [--max_step N] [--seed N] [--num_thread N]\n"
"                [--device cpu|cuda[:N]] [--gpu N] [--gpus LIST]\n"
"                [--deterministic]\n"
"                [--valid_every N] [--patience N] [--checkpoint_dir DIR]\n"
"                [--resume] [--no_checkpoint] [--keep_checkpoint] [-f]\n"
"                [--progress] [--partitions DIR] [--dist buckets|ssgd]\n"
"                [--ship_inputs]\n"
"                [--rel_sync N] [--rel_merge rows|mean|sum] [--bucket_passes K]\n"
"                [--buffer_capacity C] [--mem_budget SIZE] [--swap_dir DIR]\n"
"                [--gpu_buffer C] [--gpu_mem_budget SIZE]\n"
"                [--neg_pool N] [--neg_in_batch] [--rel_pred_weight W]\n"
"                [--dura_coef C] [--one_vs_all_dura C]\n"
"                [--lr_warmup N] [--lr_decay F]\n"
"                [--init_from MODEL] [--init_new neighbours|random|zero]\n"
"                [--reset_optimizer] [--freeze_old] [--freeze_relations]\n"
"                [--init_entities FILE.npy] [--entity-map FILE]\n"
"                [--time_budget S] [--target_mrr M] DATASET_DIR MODEL_DIR\n"
"       kg-train --model_name RGCN|RelGNN [GNN options] DATASET_DIR MODEL_DIR\n";

static const char shallow[] =
"\n"
"Train TransE_l1, TransE_l2, DistMult, ComplEx, RotatE, RESCAL or TransR on\n"
"the train split of DATASET_DIR (kg-ingest) and write embeddings, optimiser\n"
"state, train_log.jsonl and a manifest into MODEL_DIR.  Options are spelled\n"
"as DGL-KE's (dashes or underscores); a JSON --config file holds the same\n"
"options as keys, and the command line wins.  Defaults are kgpipe's.\n"
"\n"
"Model:\n"
"      --config FILE      options as a JSON object {\"model_name\": ...}\n"
"      --model_name NAME  TransE_l1, TransE_l2 (= TransE), DistMult, ComplEx,\n"
"                         RotatE, RESCAL, TransR; RGCN, RelGNN: see below\n"
"                         (default TransE_l2)\n"
"  -d, --hidden_dim N     floats per entity row (default 400), as DGL-KE\n"
"                         without -de: ComplEx and RotatE rows hold N/2\n"
"                         complex numbers, and N must be even\n"
"  -de, --double_ent      as DGL-KE: entity rows of 2N floats; ComplEx takes\n"
"                         it with -dr (2N-float relation rows too), RotatE\n"
"                         alone (N complex numbers, N phases), TransR either\n"
"  -dr, --double_rel      as DGL-KE: relation rows of 2N floats (ComplEx with\n"
"                         -de; TransR: a relation space of 2N)\n"
"      --rel_dim N        TransR's relation space (default N)\n"
"  -g, --gamma G          margin of the distance models (default 12)\n"
"      --reciprocal       add an inverse of every relation (LibKGE, kbc)\n"
"Loss:\n"
"      --loss NAME        logistic (default), margin, softmax or bce;\n"
"                         --loss_genre Logsigmoid|Logistic|Hinge|BCE too\n"
"  -m, --margin M         margin of the margin loss (default 1)\n"
"  -adv, --neg_adversarial_sampling  self-adversarial negative weights\n"
"  -a, --adversarial_temperature T   their temperature (default 1 with\n"
"                         -adv, else off)\n"
"Negatives:\n"
"  -b, --batch_size N     positives per step (default 1024)\n"
"      --neg_sample_size N  negatives shared by a chunk (default 256)\n"
"      --neg_chunk_size N positives per chunk (default: neg_sample_size)\n"
"      --neg_sampler S    uniform (default), degree or mixed (half and half);\n"
"                         DGL-KE's --neg_deg_sample is mixed\n"
"      --neg_degree_fraction F  share of degree-drawn negatives\n"
"      --neg_filter       leave out negatives that form known train triples\n"
"      --neg_types        negatives of the replaced entity's type\n"
"      --one_vs_all       every entity is a candidate (with softmax)\n"
"      --one_vs_all_after N  drawn negatives for the first N epochs, then\n"
"                         every entity a candidate (a 1-vs-all second stage)\n"
"      --one_vs_all_plateau P  the same, switching once P validations in a\n"
"                         row have not raised the best valid MRR\n"
"                         (needs --valid_every)\n"
"      --one_vs_all_grouped  1-vs-all epochs ordered by query, each query\n"
"                         of a chunk scored once (fewer score rows)\n"
"      --subsampling_weight  weigh each triple by 1/sqrt of its queries'\n"
"                         counts (RotatE's default; its --uni_weight off)\n"
"      --neg_in_batch     also the entities of the chunk's other positives\n"
"                         (PyTorch-BigGraph's batch negatives)\n"
"      --neg_pool N       with --partitions: the negatives outside the\n"
"                         corrupted partition from a pool of N rows of\n"
"                         each (default 4096; 0: none, as PyTorch-BigGraph)\n"
"Optimisation:\n"
"      --lr LR            Adagrad learning rate (default 0.1)\n"
"      --ent_optimizer O  entity rows: adagrad (row-wise, PBG and DGL-KE;\n"
"                         default), adagrad_elem (element-wise, kbc and\n"
"                         LibKGE) or adam; one process only\n"
"      --rel_optimizer O  the same for relations (default adagrad)\n"
"      --rel_lr LR        their rate (default: --lr; 0.001 for adam)\n"
"  -rc, --regularization_coef C  regulariser weight (default 0: off)\n"
"  -rn, --regularization_norm P  2 (L2) or 3 (N3, the default)\n"
"      --init I           uniform (default) or normal\n"
"      --init_scale S     initial range (default (gamma + 2) / dim)\n"
"      --max_grad_norm C  clip each row's gradient (default 0: off)\n"
"      --rel_pred_weight W  add the relation-prediction term (h, ?, t) of\n"
"                         Chen et al. 2021, weight W (default 0: off)\n"
"      --dura_coef C      DURA regulariser of DistMult, ComplEx, RESCAL\n"
"                         (default 0: off)\n"
"      --one_vs_all_dura C  DURA's coefficient in 1-vs-all epochs (default:\n"
"                         --dura_coef's)\n"
"      --lr_warmup N      raise the rates linearly over N steps (default 0)\n"
"      --lr_decay F       multiply the rates by F after every epoch\n"
"                         (default 1: constant)\n"
"      --epochs N         epochs (default 10; no limit when --max_step\n"
"                         is given alone, as in DGL-KE; 0 with --init_from\n"
"                         or --init_entities: write the start, untrained)\n"
"      --max_step N       stop after N steps (default: no limit); with\n"
"                         --epochs too, the first reached stops the run\n"
"      --seed N           seed (default 1)\n"
"      --num_thread N     OpenMP threads (default: one per core)\n"
"      --device D         cpu (default), or cuda, cuda:N for GPU N: shallow\n"
"                         models on the GPU; what it does not take\n"
"                         (1-vs-all, ...) exits 2.  Under mpirun (--dist\n"
"                         ssgd, --partitions) each rank takes a GPU:\n"
"                         cuda, local rank mod the GPUs visible; cuda:N,\n"
"                         every rank on GPU N\n"
"      --gpu N            DGL-KE's spelling: --device cuda:N (-1: cpu)\n"
"      --gpus LIST        --device cuda with the GPUs of the local ranks\n"
"                         listed (0,1,2,3), cycled when fewer than them\n"
"      --deterministic    the same result for a seed whatever the thread\n"
"                         count: rounds of 8 chunks from the same\n"
"                         parameters, their gradients applied in order\n"
"Validation and output:\n"
"      --valid_every N    filtered valid MRR every N epochs, keep the best\n"
"                         (default 0: off); DGL-KE's --eval_interval counts\n"
"                         steps and is ignored\n"
"      --patience K       stop after K validations without gain (default 0:\n"
"                         never)\n"
"      --time_budget S    stop after the epoch in which training time\n"
"                         reaches S seconds (default 0: off)\n"
"      --target_mrr M     stop once a validation reaches MRR M (needs\n"
"                         --valid_every; default 0: off)\n"
"      --checkpoint_dir D epoch-end checkpoints (default MODEL_DIR.ckpt)\n"
"      --resume           continue from the checkpoint\n"
"      --no_checkpoint    write none\n"
"      --keep_checkpoint  keep the default checkpoint after success\n"
"  -f, --force            replace an existing MODEL_DIR, start over on\n"
"                         an existing checkpoint\n"
"      --progress         progress (rate, ETA) even when stderr is no terminal\n"
"  -q, --quiet            errors only\n"
"Warm start (one process, no --partitions or --dist yet):\n"
"      --init_from MODEL  start from MODEL's rows, matched by entity and\n"
"                         relation name; same model, dims and --reciprocal\n"
"      --init_new HOW     new entities: neighbours (default: the mean of what\n"
"                         their known neighbours imply), random or zero\n"
"      --reset_optimizer  optimiser state starts at zero (default: carried)\n"
"      --freeze_old       train only new rows (not supported yet: exits 2)\n"
"      --freeze_relations with --freeze_old, keep the relations too\n"
"      --init_entities F  entity rows from float32 [rows, dim] F.npy\n"
"      --entity-map FILE  row<TAB>name lines giving each entity's row of F\n"
"Distributed (under mpirun):\n"
"      --partitions DIR   train on kg-partition buckets (PyTorch-BigGraph);\n"
"                         --valid_every and --max_step in one process only\n"
"      --dist M           buckets (implied by --partitions) or ssgd\n"
"                         (synchronous data parallel on the whole dataset)\n"
"      --rel_sync N       steps between relation merges, a step one bucket\n"
"                         of every rank (default 1; 0: at epoch ends)\n"
"      --rel_merge M      a relation's merged change: the ranks' changes\n"
"                         summed, divided by the ranks that changed it\n"
"                         (rows, default), by the rank count (mean) or\n"
"                         by nothing (sum)\n"
"      --ship_inputs      rank 0 sends every rank the inputs it reads\n"
"                         over MPI (hosts that share no filesystem)\n"
"      --bucket_passes K  K passes over the buckets an epoch, each with a\n"
"                         K-th of every bucket's triples (default 1)\n"
"Out of core (with --partitions, one process):\n"
"      --buffer_capacity C  at most C partitions in memory (C >= 2)\n"
"      --mem_budget SIZE  C from a byte budget (suffix K, M, G or T)\n"
"      --swap_dir DIR     the partition files (default: beside the\n"
"                         checkpoint directory)\n"
"On a device (with --partitions and --device cuda, one process):\n"
"      --gpu_buffer C     C partitions on the GPU (2 <= C <= P), one more\n"
"                         to read ahead into; the buckets in the order\n"
"                         for C, the negative pool on the GPU too\n"
"      --gpu_mem_budget SIZE  C from a byte budget (suffix K, M, G or T)\n";

static const char gnn[] =
"\n"
"GNN encoders (--model_name RGCN or RelGNN), over kg-encode-attrs features\n"
"or learned rows, with a shallow decoder; of the options above they take\n"
"--config, --hidden_dim (the entity embedding, default 32 here), --lr\n"
"(Adam, default 0.01), --regularization_coef (default 0), --batch_size\n"
"(global, default 1024), --neg_sample_size (default 8), --loss (default\n"
"bce), --gamma, --adversarial_temperature, --epochs, --max_step, --seed,\n"
"--num_thread, --device, --gpu, --ship_inputs, --checkpoint_dir, --resume,\n"
"--no_checkpoint, --keep_checkpoint, --time_budget, --valid_every,\n"
"--patience and "
"--target_mrr (one rank, without --expanded), --force and -q, and these:\n"
"      --decoder NAME     DistMult (default), TransE_l1, TransE_l2, ComplEx\n"
"      --features DIR     kg-encode-attrs features (default: learned rows)\n"
"      --learned_only     learned input rows, features ignored\n"
"      --expanded DIR     kg-expand output, one part per rank\n"
"      --layers N         graph layers after the attribute layer, 0-3\n"
"                         (default 2)\n"
"      --gnn_hidden N     attribute and hidden layer width (default 64)\n"
"      --decomposition D  basis (default) or block R-GCN weights\n"
"      --num_bases N      bases or blocks (default 2)\n"
"      --dropout P        dropout on graph layer inputs (default 0.2)\n"
"      --edge_dropout P   messages dropped per step (default 0)\n"
"      --fanout N,N       sampled messages per node and layer (default:\n"
"                         the whole graph)\n"
"      --neg_candidates C adaptive negatives: keep the hardest of C times\n"
"                         as many (default off)\n"
"      --neg_pool_seeds   under --expanded, negatives from the part's seeds\n"
"      --neg_exchange     with --neg_chunk_size on several ranks, each chunk's\n"
"                         negatives from a rank drawn by pool size (its own\n"
"                         or another's, exchanged each step)\n";

static const char tail[] =
"\n"
"DGL-KE options accepted and ignored, with what to use instead:\n"
"  --valid -> --valid_every N;  --save_path -> MODEL_DIR;  --test -> kg-eval;\n"
"  --data_path, --dataset, --format, --data_files, --delimiter -> kg-ingest\n"
"  (which takes them) to make DATASET_DIR;  --num_proc -> --num_thread or\n"
"  mpirun;  --log_interval -> --progress;  --eval_interval -> --valid_every\n"
"  (in epochs);  --batch_size_eval, --neg_sample_size_eval,\n"
"  --neg_deg_sample_eval, --eval_percent, --no_eval_filter -> kg-eval's\n"
"  --batch, --neg-sample, --neg-mode, --raw;  --mix_cpu_gpu,\n"
"  --async_update, --rel_part, --soft_rel_part, --force_sync_interval,\n"
"  --no_save_emb, --has_edge_importance: no counterpart.\n"
"  -h, --help             this help\n"
"      --version          print the version\n";

/* What to use instead of each ignored DGL-KE option. */
static const char *const ignored_hint[][2] = {
	{ "valid", "use --valid_every N (validation every N epochs)" },
	{ "eval_interval", "it counts steps; use --valid_every N (epochs)" },
	{ "save_path", "the model directory is the MODEL_DIR operand" },
	{ "test", "evaluate with kg-eval DATASET_DIR MODEL_DIR" },
	{ "data_path", "make DATASET_DIR with kg-ingest, which takes it" },
	{ "dataset", "make DATASET_DIR with kg-ingest, which takes it" },
	{ "format", "make DATASET_DIR with kg-ingest, which takes it" },
	{ "data_files", "make DATASET_DIR with kg-ingest, which takes it" },
	{ "delimiter", "make DATASET_DIR with kg-ingest, which takes it" },
	{ "num_proc", "use --num_thread N, or mpirun with --dist ssgd or "
	    "--partitions" },
	{ "log_interval", "use --progress" },
	{ "batch_size_eval", "kg-eval takes --batch" },
	{ "neg_sample_size_eval", "kg-eval takes --neg-sample" },
	{ "neg_deg_sample_eval", "kg-eval takes --neg-mode degree" },
	{ "eval_percent", "kg-eval evaluates the whole split" },
	{ "no_eval_filter", "kg-eval takes --raw" },
	{ "force_sync_interval", "see --dist and --rel_sync" },
	{ "async_update", "see --dist and --rel_sync" },
	{ "rel_part", "see --dist and --rel_sync" },
	{ "soft_rel_part", "see --dist and --rel_sync" },
	{ "no_save_emb", "the model directory always holds the embeddings" },
	{ "has_edge_importance", "edge weights are not supported" },
	{ "mix_cpu_gpu", "a run keeps its tables on one device (--device)" },
};

const char *
kg_train_ignored_hint(const char *name)
{
	size_t k;

	for (k = 0; k < KG_ARRAY_LEN(ignored_hint); k++)
		if (strcmp(name, ignored_hint[k][0]) == 0)
			return ignored_hint[k][1];
	return "it has no meaning here";
}

void
kg_train_usage(FILE *f, int full)
{
	fputs(synopsis, f);
	if (!full)
		return;
	fputs(shallow, f);
	fputs(gnn, f);
	fputs(tail, f);
}

int
kg_train_help_wanted(int argc, char *argv[])
{
	int i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0)
			break;
		if (strcmp(argv[i], "--help") == 0 ||
		    strcmp(argv[i], "-h") == 0)
			return 1;
	}
	return 0;
}
