# The settings of bench/train_accuracy.sh, one function that the benchmark
# and tests/cli/kg-train/wn18rr_transe.sh both source, so a test trains
# what the benchmark trains.
#
# WN18RR's TransE was TransE_l2 here and reached a filtered test MRR of
# 0.017 after 10 epochs (issue 15): with these margins and negatives the
# squared-distance model does not learn WordNet's sparse hierarchy
# (valid MRR 0.009 after 5 epochs, against 0.162 for TransE_l1 with the
# same settings; the published TransE result on WN18RR is an L1 model).
# config DATASET MODEL: prints "EPOCHS BAR ARGS..." for the run.
config() {
	case "$1/$2" in
	fb15k-237/ComplEx-N3) echo 100 0.37 --model_name ComplEx --hidden_dim 2000 \
	    --reciprocal --one_vs_all --loss softmax --lr 0.1 --batch_size 100 \
	    --neg_chunk_size 100 --regularization_coef 0.05 --regularization_norm 3 \
	    --init normal --init_scale 1e-3 ;;
	wn18rr/ComplEx-N3) echo 100 0.49 --model_name ComplEx --hidden_dim 4000 \
	    --reciprocal --one_vs_all --loss softmax --lr 0.1 --batch_size 100 \
	    --neg_chunk_size 100 --regularization_coef 0.1 --regularization_norm 3 \
	    --init normal --init_scale 1e-3 ;;
	fb15k-237/RESCAL) echo 200 0.356 --model_name RESCAL --hidden_dim 128 \
	    --reciprocal --loss softmax --batch_size 1024 --neg_sample_size 256 \
	    --lr 0.1 --init normal --init_scale 0.1 ;;
	wn18rr/RESCAL) echo 200 0.467 --model_name RESCAL --hidden_dim 128 \
	    --reciprocal --loss softmax --batch_size 1024 --neg_sample_size 256 \
	    --lr 0.1 --init normal --init_scale 0.1 ;;
	fb15k-237/DistMult) echo 200 0.343 --model_name DistMult --hidden_dim 400 \
	    --reciprocal --loss softmax --batch_size 1024 --neg_sample_size 256 \
	    --lr 0.1 --regularization_coef 1e-3 --regularization_norm 3 \
	    --init normal --init_scale 0.1 ;;
	wn18rr/DistMult) echo 200 0.452 --model_name DistMult --hidden_dim 400 \
	    --reciprocal --loss softmax --batch_size 1024 --neg_sample_size 256 \
	    --lr 0.1 --regularization_coef 1e-3 --regularization_norm 3 \
	    --init normal --init_scale 0.1 ;;
	fb15k-237/RotatE) echo 200 0.337 --model_name RotatE --hidden_dim 1000 \
	    --gamma 9 -adv --adversarial_temperature 1 --batch_size 1024 \
	    --neg_sample_size 256 --lr 0.05 ;;
	wn18rr/RotatE) echo 200 0.48 --model_name RotatE --hidden_dim 1000 \
	    --gamma 6 -adv --adversarial_temperature 0.5 --batch_size 512 \
	    --neg_sample_size 512 --lr 0.05 ;;
	fb15k-237/TransE) echo 200 0.313 --model_name TransE_l2 --hidden_dim 400 \
	    --gamma 9 -adv --adversarial_temperature 1 --batch_size 1024 \
	    --neg_sample_size 256 --lr 0.05 ;;
	wn18rr/TransE) echo 200 0.228 --model_name TransE_l1 --hidden_dim 400 \
	    --gamma 6 -adv --adversarial_temperature 0.5 --batch_size 512 \
	    --neg_sample_size 512 --lr 0.05 ;;
	*) return 1 ;;
	esac
}
