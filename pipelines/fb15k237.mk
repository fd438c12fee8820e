# FB15k-237 (Toutanova and Chen 2015): 14,541 entities, 237 relations.
#   make -f pipelines/fb15k237.mk                     # ComplEx-N3 config
#   make -f pipelines/fb15k237.mk CONFIG=examples/configs/pbg_fb15k237.json
#   make -f pipelines/fb15k237.mk DATA=/data/FB15k-237 EXT=txt
#   make -f pipelines/fb15k237.mk EPOCHS=5 plot      # a short run, plotted
#   make -f pipelines/fb15k237.mk OUT=out/today INIT_FROM=out/yesterday/MODEL
#                                 # warm start (benchmark.mk)
NAME := fb15k237
_HERE := $(dir $(lastword $(MAKEFILE_LIST)))
DATA ?= $(abspath $(_HERE)../../shared/data/fb15k-237)
CONFIG ?= $(abspath $(_HERE)../examples/configs/complex_n3_fb15k237.json)
include $(_HERE)benchmark.mk
