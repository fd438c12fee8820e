# WN18RR (Dettmers et al. 2018): 40,943 entities, 11 relations.
#   make -f pipelines/wn18rr.mk                       # ComplEx-N3 config
#   make -f pipelines/wn18rr.mk DATA=/data/WN18RR EXT=txt
#   make -f pipelines/wn18rr.mk EPOCHS=5 plot        # a short run, plotted
#   make -f pipelines/wn18rr.mk OUT=out/today INIT_FROM=out/yesterday/MODEL
#                                 # warm start (benchmark.mk)
NAME := wn18rr
_HERE := $(dir $(lastword $(MAKEFILE_LIST)))
DATA ?= $(abspath $(_HERE)../../shared/data/wn18rr)
CONFIG ?= $(abspath $(_HERE)../examples/configs/complex_n3_wn18rr.json)
include $(_HERE)benchmark.mk
