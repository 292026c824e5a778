/*
 * src/cli/config.h: what a spart config file (YAML) says, read and checked
 * in one go. docs/config.md documents every key: its meaning, unit and
 * default. Every complaint names the file, the line and column, and the
 * key: "run.yaml:12:3: solver.threshold: expected a number, got 'abc'".
 */
#ifndef SPART_CLI_CONFIG_H
#define SPART_CLI_CONFIG_H

#include <stddef.h>
#include <stdint.h>

#include "spart.h"

/* Channels a config may declare (one dispersion angle each). */
#define CONFIG_MAX_CHANNELS 64
/* Spectral lines a config may declare (instrument.lines). */
#define CONFIG_MAX_LINES 16
/* Frames a config may synthesise (observations.synthesize.frames). */
#define CONFIG_MAX_FRAMES 100000
/* Room for a path, a sentence. */
#define CONFIG_PATH_LENGTH 4096
#define CONFIG_ERROR_LENGTH 1024

/* The true scene: synthetic blobs, a FITS cube, or none (observations read
 * from a file without a scene to compare with). */
typedef enum config_scene_kind {
    SCENE_GAUSSIANS = 0,
    SCENE_FILE = 1,
    SCENE_NONE = 2
} config_scene_kind;
typedef enum config_observations_kind {
    OBSERVATIONS_SYNTHESIZE = 0,
    OBSERVATIONS_FILE = 1
} config_observations_kind;
typedef enum config_device { DEVICE_HOST = 0, DEVICE_CUDA = 1, DEVICE_AUTO = 2 } config_device;

/* A uniform axis of cells: `cells` cells from `min` to `max` (vertices
 * min + (max - min) k / cells). */
typedef struct config_axis {
    double min;
    double max;
    int64_t cells;
} config_axis;

/* Where a key was found, so that later checks (a FITS file whose shape
 * does not match the grid) can point at it too. */
typedef struct config_position {
    int line;
    int column;
} config_position;

/* One spectral line: its rest wavelength, its bins (as Doppler velocities
 * from the rest wavelength, or as wavelengths) and its intensity scale
 * (spart_instrument_line). */
typedef struct config_line {
    char name[32];          /* as given, or "" */
    double wavelength_rest; /* A */
    int has_velocity;       /* the bins given as velocity (else wavelength) */
    config_axis velocity;   /* km/s */
    config_axis wavelength; /* A */
    double intensity_scale; /* > 0; default 1 */
} config_line;

typedef struct config_instrument {
    int64_t num_channel;
    double angle[CONFIG_MAX_CHANNELS]; /* degree */
    /* The spectral lines: one from the keys wavelength_rest and velocity or
     * wavelength (has_lines 0), or instrument.lines (has_lines 1). The four
     * fields after has_lines are always line[0]'s (the first line's). */
    int has_lines;
    int64_t num_line;
    config_line line[CONFIG_MAX_LINES];
    double wavelength_rest;      /* A: the (first) line; velocities are relative to it */
    int has_velocity;            /* the spectral bins given as velocity (else wavelength) */
    config_axis velocity;        /* km/s */
    config_axis wavelength;      /* A */
    int has_dispersion_velocity; /* dispersion given in km/s per pixel */
    double dispersion;           /* A/pixel (resolved from either key) */
    double dispersion_velocity;  /* km/s per pixel, as given */
    double plate_scale;          /* arcsec/pixel */
    config_axis scene_x;         /* arcsec */
    config_axis scene_y;
    int64_t sensor_pixels_x;
    int64_t sensor_pixels_y;
    double position_ref[2];    /* pixel; default the sensor centre */
    double wavelength_ref;     /* A; default wavelength_rest */
    double area_effective;     /* cm^2 */
    double exposure_time;      /* s */
    double quantum_yield;      /* electron/photon */
    double read_noise;         /* electron */
    int solid_angle_steradian; /* radiance per steradian (1, default) or per arcsec^2 (0) */
    double memory_budget_gb;   /* > 0: build by streaming within this many GB an operator */
    config_position memory_budget_position;
    /* instrument.psf: one elliptical Gaussian per channel, psf_size x
     * psf_size pixels, standard deviations psf_major and psf_minor (pixel)
     * with the major axis at psf_angle (degree from sensor x); psf_mode
     * 0 auto, 1 fft, 2 folded (spart_psf_mode). */
    int has_psf;
    int64_t psf_size;
    double psf_major[CONFIG_MAX_CHANNELS];
    double psf_minor[CONFIG_MAX_CHANNELS];
    double psf_angle[CONFIG_MAX_CHANNELS];
    int psf_mode;
    /* Operators saved by `spart build`, to load instead of building them:
     * the folder (resolved against the config's folder), or "". */
    char operators[CONFIG_PATH_LENGTH];
    config_position operators_position;
} config_instrument;

typedef struct config_scene {
    config_scene_kind kind;
    double width_velocity;         /* km/s */
    double width_x;                /* arcsec */
    double width_y;                /* arcsec */
    double background;             /* fraction of the peak added to every voxel */
    double drift;                  /* arcsec per frame: the blobs' motion (spart/scene.h) */
    char file[CONFIG_PATH_LENGTH]; /* resolved against the config's folder */
    config_position file_position;
} config_scene;

typedef struct config_observations {
    config_observations_kind kind;
    uint64_t seed;  /* frame f is drawn with seed + f */
    int noise;      /* draw noise (1) or use the expected images (0) */
    int64_t frames; /* frames to synthesise (>= 1; default 1) */
    char file[CONFIG_PATH_LENGTH];
    config_position file_position;
} config_observations;

typedef struct config_solver {
    double gamma; /* 0: 2 / channels */
    spart_mart_stop_rule stop_rule;
    double threshold;
    double target;
    int64_t max_iterations;
    config_device device;
    spart_value_type value_type;
} config_solver;

typedef struct config_outputs {
    char folder[CONFIG_PATH_LENGTH]; /* as given: relative to the working folder */
    int pictures;
    int float32; /* value_type: float32: the FITS cubes' values written as float32 */
} config_outputs;

typedef struct config {
    char path[CONFIG_PATH_LENGTH]; /* the config file, as given */
    config_instrument instrument;
    config_scene scene;
    config_observations observations;
    config_solver solver;
    config_outputs outputs;
} config;

/* Read and check the config file `path` into `cfg`. Returns 0, or nonzero
 * with the sentence in `error`. */
int config_read(const char *path, config *cfg, char *error, size_t error_size);

/* Vertex coordinates of an axis: cells + 1 values into `vertices`. */
void config_axis_vertices(const config_axis *axis, double *vertices);

/* A complaint about the key at `position` of the config file, after the
 * file was read (a FITS file that does not fit, say), in the same form as
 * config_read's: "<file>:<line>:<column>: <key>: <text>". */
void config_error_at(const config *cfg, config_position position, const char *key, char *error,
                     size_t error_size, const char *format, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 6, 7)))
#endif
    ;

#endif /* SPART_CLI_CONFIG_H */
