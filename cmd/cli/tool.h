/*
 * tool: what every kgpipe tool's main() does the same way.
 */
#ifndef KG_TOOL_H
#define KG_TOOL_H

/*
 * Where OpenBLAS failed to recognise the CPU (virtual machines), set
 * OPENBLAS_CORETYPE to fitting kernels and execute this program again
 * with the same argv (lib/compute/compute.h: kg_compute_better_core);
 * the generic kernels are several times slower.  Returns only when no
 * re-execution was wanted or exec failed, in which case the tool carries
 * on with the kernels it has.
 */
void kg_tool_tune_blas(char *argv[]);

#endif
