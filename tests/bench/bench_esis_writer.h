/*
 * tests/bench/bench_esis_writer.h: bench_esis_run's writer of the ESIS
 * solutions, each as the spart command writes it (src/cli/fits_cube.c,
 * output_files.h: under a temporary name beside its final one, flushed to
 * disk, renamed into place), by a writer thread that takes each frame as
 * the solve hands it over, and the stages after it: a thread that flushes
 * and renames each file (--fsync-thread) and one that removes it (not
 * timed: 30 whole-ESIS solutions would fill the GPU machine's disk).
 * Included by bench_esis_run.c only (after bench_esis_params.h and
 * bench_util.h).
 */
#ifndef SPART_BENCH_ESIS_WRITER_H
#define SPART_BENCH_ESIS_WRITER_H

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bench_esis_params.h"
#include "bench_util.h"
#include "cli/fits_cube.h"
#include "cli/output_files.h"
#include "spart.h"

/* What the writer needs of the benchmark's options. */
typedef struct esis_write_options {
    const char *out;  /* the output folder: <out>/frame-NNNN/solution.fits */
    int float32;      /* float32 solutions (BITPIX -32), else float64 */
    int keep;         /* keep the files (no remover) */
    int fsync_thread; /* the flush and rename on a second thread */
    int write_frames; /* write the first this many frames only */
} esis_write_options;

/* Frame f's solution as the spart command writes it (output_files.h: under
 * a temporary name beside its final one, flushed to disk, renamed into
 * place; the cube on the OpenMP threads). Returns its bytes. */
static double write_solution(const esis_write_options *o, const esis_arrays *a, int frame,
                             const double *solution, output_file *file_out, int commit)
{
    char folder[4096], error[1024];
    snprintf(folder, sizeof folder, "%s/frame-%04d", o->out, frame);
    cube data;
    memset(&data, 0, sizeof data);
    data.axis[0] = (cube_axis){(int64_t)a->lines * a->bins,
                               "SPECBIN",
                               "",
                               0.0,
                               1.0,
                               "spectral bin (every line's, line after line)"};
    data.axis[1] = (cube_axis){
        a->cells, "HPLN-TAN", "arcsec", a->scene[0] + 0.375, 0.75, "scene x (cell centres)"};
    data.axis[2] = (cube_axis){
        a->cells, "HPLT-TAN", "arcsec", a->scene[0] + 0.375, 0.75, "scene y (cell centres)"};
    data.values = solution;
    data.kind = "scene";
    data.content = "MART solution";
    data.bunit = "erg / (A sr cm2 s)";
    data.float32 = o->float32;
    data.threads = omp_get_max_threads(); /* as the command: the context's threads */
    output_file *file = file_out;
    if (output_file_begin(file, folder, "solution.fits", error, sizeof error) != 0 ||
        fits_cube_write(file->temporary_path, file->final_path, &data, error, sizeof error) != 0) {
        output_file_abandon(file);
        fprintf(stderr, "%s\n", error);
        exit(1);
    }
    struct stat info;
    double bytes = stat(file->temporary_path, &info) == 0 ? (double)info.st_size : 0.0;
    if (commit && output_file_commit(file, 1, error, sizeof error) != 0) {
        fprintf(stderr, "%s\n", error);
        exit(1);
    }
    return bytes;
}

/* Frame f's file flushed to disk and renamed into place (fsync-thread). */
static void commit_solution(output_file *file)
{
    char error[1024];
    if (output_file_commit(file, 1, error, sizeof error) != 0) {
        fprintf(stderr, "%s\n", error);
        exit(1);
    }
}

/* Frame f's solution and its folder removed. */
static void remove_solution(const esis_write_options *o, int f)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/frame-%04d/solution.fits", o->out, f);
    remove(path);
    snprintf(path, sizeof path, "%s/frame-%04d", o->out, f);
    rmdir(path);
}

/* ---- the stages after the writer: each frame's file committed, then removed ------------- */

/* A thread that takes the frames the stage before it has finished, in
 * order: commits them (--fsync-thread: each file flushed to disk and
 * renamed while the writer fills the next one's pages) or removes them
 * (removing a whole-ESIS solution frees 1.74 GB of page cache, about 0.5 s
 * on the H200 machine: a production run keeps its files, so this is done
 * beside the writer, not in its way), then hands them on. */
typedef struct stage_state {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int queued, done, finished; /* frames handed over, finished here, no more to come */
    int commit;                 /* 1: commit each file; 0: remove it */
    output_file *files;         /* each frame's file */
    const esis_write_options *o;
    struct stage_state *next; /* the stage after this one, or NULL */
    double busy;              /* seconds committing */
} stage_state;

static void stage_hand_over(stage_state *stage, int frames)
{
    if (stage != NULL) {
        pthread_mutex_lock(&stage->lock);
        stage->queued = frames;
        pthread_cond_broadcast(&stage->changed);
        pthread_mutex_unlock(&stage->lock);
    }
}

static void *run_stage(void *user)
{
    stage_state *r = user;
    pthread_mutex_lock(&r->lock);
    for (;;) {
        while (r->done == r->queued && !r->finished) {
            pthread_cond_wait(&r->changed, &r->lock);
        }
        if (r->done == r->queued) {
            break;
        }
        int f = r->done;
        pthread_mutex_unlock(&r->lock);
        if (r->commit) {
            double start = bench_seconds();
            commit_solution(&r->files[f]);
            r->busy += bench_seconds() - start;
        } else {
            remove_solution(r->o, f);
        }
        stage_hand_over(r->next, f + 1);
        pthread_mutex_lock(&r->lock);
        r->done = f + 1;
    }
    pthread_mutex_unlock(&r->lock);
    return NULL;
}

/* Start a stage's thread; returns 0, or exits. */
static void stage_start(stage_state *stage, pthread_t *thread, int commit, output_file *files,
                        const esis_write_options *o, stage_state *next)
{
    memset(stage, 0, sizeof *stage);
    pthread_mutex_init(&stage->lock, NULL);
    pthread_cond_init(&stage->changed, NULL);
    stage->commit = commit;
    stage->files = files;
    stage->o = o;
    stage->next = next;
    if (pthread_create(thread, NULL, run_stage, stage) != 0) {
        fprintf(stderr, "cannot start a thread\n");
        exit(1);
    }
}

/* No more frames: the stage finishes what it has and ends. */
static void stage_finish(stage_state *stage, pthread_t thread)
{
    pthread_mutex_lock(&stage->lock);
    stage->finished = 1;
    pthread_cond_broadcast(&stage->changed);
    pthread_mutex_unlock(&stage->lock);
    pthread_join(thread, NULL);
    pthread_cond_destroy(&stage->changed);
    pthread_mutex_destroy(&stage->lock);
}

/* ---- the writer thread: each frame's solution as the solve hands it over ---------------- */

typedef struct writer_state {
    pthread_mutex_t lock;
    pthread_cond_t changed;
    int ready, finished, written; /* frames handed over, no more to come, written */
    int catch_up;                 /* return once every frame handed over is written */
    spart_mart_result **results;  /* each freed once written */
    const double **solutions;     /* frame f's solution (the result's, or a pinned slot's) */
    output_file *files;           /* each frame's file */
    stage_state *after;           /* the stage after the writer, or NULL */
    const esis_write_options *o;
    const esis_arrays *a;
    double busy, bytes; /* seconds writing, bytes written */
} writer_state;

static void *write_frames(void *user)
{
    writer_state *w = user;
    pthread_mutex_lock(&w->lock);
    for (;;) {
        while (w->written == w->ready && !w->finished && !w->catch_up) {
            pthread_cond_wait(&w->changed, &w->lock);
        }
        if (w->written == w->ready) {
            break;
        }
        int f = w->written;
        pthread_mutex_unlock(&w->lock);
        if (f < w->o->write_frames) {
            double start = bench_seconds();
            w->bytes +=
                write_solution(w->o, w->a, f, w->solutions[f], &w->files[f], !w->o->fsync_thread);
            w->busy += bench_seconds() - start;
            stage_hand_over(w->after, f + 1);
        }
        spart_mart_result_free(w->results[f]);
        w->results[f] = NULL;
        pthread_mutex_lock(&w->lock);
        w->written = f + 1;
        pthread_cond_broadcast(&w->changed); /* a pinned slot may be free again */
    }
    pthread_mutex_unlock(&w->lock);
    return NULL;
}

#endif /* SPART_BENCH_ESIS_WRITER_H */
