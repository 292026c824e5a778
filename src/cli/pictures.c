/*
 * src/cli/pictures.c: the three pictures of an inversion (see pictures.h).
 */
#include "pictures.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cairo.h>

#include "cli.h"
#include "output_files.h"
#include "picture_parts.h"
#include "scene.h"

/* Velocities are left grey where the intensity is below this fraction of
 * the map's peak: a first moment of almost nothing is noise. */
#define VELOCITY_MASK_FRACTION 0.2

size_t pictures_file_names(const char **names)
{
    names[0] = "scene.png";
    names[1] = "images.png";
    names[2] = "merit.png";
    return 3;
}

/* ---- writing a picture -------------------------------------------------------------------- */

typedef int (*picture_painter)(cairo_t *cr, const results *outputs, double width, double height);

typedef struct picture_job {
    const results *outputs;
    picture_painter paint;
    int width;
    int height;
} picture_job;

/* The PNG bytes as cairo hands them over, gathered in memory. */
typedef struct png_bytes {
    unsigned char *data;
    size_t size;
    size_t capacity;
} png_bytes;

static cairo_status_t gather_png(void *closure, const unsigned char *data, unsigned int length)
{
    png_bytes *bytes = closure;
    if (bytes->size + length > bytes->capacity) {
        size_t capacity = bytes->capacity > 0 ? bytes->capacity : 65536;
        while (capacity < bytes->size + length) {
            capacity *= 2;
        }
        unsigned char *grown = realloc(bytes->data, capacity);
        if (grown == NULL) {
            return CAIRO_STATUS_NO_MEMORY;
        }
        bytes->data = grown;
        bytes->capacity = capacity;
    }
    memcpy(bytes->data + bytes->size, data, length);
    bytes->size += length;
    return CAIRO_STATUS_SUCCESS;
}

static int write_picture(const char *temporary, const char *final_path, const void *data,
                         char *error, size_t error_size)
{
    const picture_job *job = data;
    cairo_surface_t *surface =
        cairo_image_surface_create(CAIRO_FORMAT_RGB24, job->width, job->height);
    cairo_t *cr = cairo_create(surface);
    int painted = job->paint(cr, job->outputs, job->width, job->height);
    cairo_status_t status = cairo_status(cr);
    cairo_destroy(cr);
    png_bytes bytes = {NULL, 0, 0};
    if (painted == 0 && status == CAIRO_STATUS_SUCCESS) {
        status = cairo_surface_write_to_png_stream(surface, gather_png, &bytes);
    }
    cairo_surface_destroy(surface);
    int result = 0;
    if (painted != 0 || status != CAIRO_STATUS_SUCCESS) {
        snprintf(error, error_size, "cannot write %s: %s", final_path,
                 painted != 0 ? "out of memory while drawing" : cairo_status_to_string(status));
        result = -1;
    } else {
        result =
            output_write_bytes(temporary, final_path, bytes.data, bytes.size, error, error_size);
    }
    free(bytes.data);
    return result;
}

/* ---- scene.png ----------------------------------------------------------------------------- */

static double peak_of(const double *values, int64_t count)
{
    double peak = 0.0;
    for (int64_t k = 0; k < count; k++) {
        peak = values[k] > peak ? values[k] : peak;
    }
    return peak;
}

/* Grey out velocities where the intensity is too faint to give one. */
static void mask_faint(double *velocity, const double *intensity, int64_t count)
{
    double floor_value = VELOCITY_MASK_FRACTION * peak_of(intensity, count);
    for (int64_t k = 0; k < count; k++) {
        if (!(intensity[k] > floor_value)) {
            velocity[k] = NAN;
        }
    }
}

/* The largest |velocity| shown, so that the scale is symmetric about 0. */
static double velocity_extent(const double *velocity, int64_t count)
{
    double extent = 0.0;
    for (int64_t k = 0; k < count; k++) {
        if (!isnan(velocity[k]) && fabs(velocity[k]) > extent) {
            extent = fabs(velocity[k]);
        }
    }
    return extent > 0.0 ? extent : 1.0;
}

/* Moments of the truth (row 0, if any) and of the solution (last row):
 * intensity[row], velocity[row], each num_scene_x * num_scene_y values. */
typedef struct scene_maps {
    int rows;
    double *intensity[2];
    double *velocity[2];
    double intensity_high;
    double velocity_extent;
} scene_maps;

static int make_scene_maps(const results *outputs, scene_maps *maps)
{
    const problem *made = outputs->made;
    int64_t plane = made->num_scene_x * made->num_scene_y;
    const double *scenes[2] = {outputs->truth, spart_mart_result_solution(outputs->result)};
    int first = outputs->truth != NULL ? 0 : 1;
    maps->rows = 2 - first;
    maps->intensity_high = 0.0;
    maps->velocity_extent = 0.0;
    for (int row = 0; row < maps->rows; row++) {
        maps->intensity[row] = malloc((size_t)plane * sizeof(double));
        maps->velocity[row] = malloc((size_t)plane * sizeof(double));
        if (maps->intensity[row] == NULL || maps->velocity[row] == NULL) {
            return -1;
        }
        scene_moments(made, scenes[first + row], maps->intensity[row], maps->velocity[row]);
        mask_faint(maps->velocity[row], maps->intensity[row], plane);
        double high = peak_of(maps->intensity[row], plane);
        double extent = velocity_extent(maps->velocity[row], plane);
        maps->intensity_high = high > maps->intensity_high ? high : maps->intensity_high;
        maps->velocity_extent = extent > maps->velocity_extent ? extent : maps->velocity_extent;
    }
    return 0;
}

static void free_scene_maps(scene_maps *maps)
{
    for (int row = 0; row < 2; row++) {
        free(maps->intensity[row]);
        free(maps->velocity[row]);
    }
}

#define SCENE_PANEL_WIDTH 380.0
#define SCENE_PANEL_HEIGHT 330.0
#define SCENE_CAPTION 48.0

static int paint_scene(cairo_t *cr, const results *outputs, double width, double height)
{
    const problem *made = outputs->made;
    scene_maps maps = {0, {NULL, NULL}, {NULL, NULL}, 0.0, 0.0};
    if (make_scene_maps(outputs, &maps) != 0) {
        free_scene_maps(&maps);
        return -1;
    }
    picture_clear(cr, width, height);
    const char *intensity_unit =
        outputs->cfg->instrument.solid_angle_steradian ? "erg/(cm2 s sr)" : "erg/(cm2 s arcsec2)";
    /* Wavelength-integrated: the unit of radiance times angstrom. */
    int failed = 0;
    for (int row = 0; row < maps.rows && !failed; row++) {
        int is_truth = outputs->truth != NULL && row == 0;
        picture_map intensity = {maps.intensity[row],
                                 made->num_scene_x,
                                 made->num_scene_y,
                                 0.0,
                                 maps.intensity_high,
                                 COLOURS_INTENSITY,
                                 is_truth ? "true intensity" : "recovered intensity",
                                 intensity_unit};
        picture_map velocity = {maps.velocity[row],
                                made->num_scene_x,
                                made->num_scene_y,
                                -maps.velocity_extent,
                                maps.velocity_extent,
                                COLOURS_VELOCITY,
                                is_truth ? "true velocity" : "recovered velocity",
                                "km/s"};
        double top = 10.0 + row * SCENE_PANEL_HEIGHT;
        failed = picture_draw_map(cr, &intensity, 10.0, top, SCENE_PANEL_WIDTH,
                                  SCENE_PANEL_HEIGHT - 10.0) != 0 ||
                 picture_draw_map(cr, &velocity, 20.0 + SCENE_PANEL_WIDTH, top, SCENE_PANEL_WIDTH,
                                  SCENE_PANEL_HEIGHT - 10.0) != 0;
    }
    char caption[256];
    snprintf(caption, sizeof caption,
             "x %g to %g arcsec (right), y %g to %g arcsec (up); velocity: 1st moment of the "
             "spectrum, grey under %g%% of peak intensity",
             made->scene_x[0], made->scene_x[made->num_scene_x], made->scene_y[0],
             made->scene_y[made->num_scene_y], 100.0 * VELOCITY_MASK_FRACTION);
    picture_text(cr, caption, 14.0, height - SCENE_CAPTION + 18.0, 11.0, 0.0);
    if (outputs->truth != NULL) {
        snprintf(caption, sizeof caption,
                 "correlation of the recovered with the true scene: %.3f (voxels), %.3f "
                 "(intensity)",
                 scene_correlation(outputs->truth, spart_mart_result_solution(outputs->result),
                                   made->scene_size),
                 scene_correlation(maps.intensity[0], maps.intensity[1],
                                   made->num_scene_x * made->num_scene_y));
        picture_text(cr, caption, 14.0, height - SCENE_CAPTION + 36.0, 11.0, 0.0);
    }
    free_scene_maps(&maps);
    return failed ? -1 : 0;
}

/* ---- images.png ------------------------------------------------------------------------------ */

#define IMAGE_PANEL_WIDTH 330.0

static double image_panel_height(const problem *made)
{
    double shown =
        (IMAGE_PANEL_WIDTH - 78.0) * (double)made->num_sensor_y / (double)made->num_sensor_x;
    return (shown < 400.0 ? shown : 400.0) + 40.0;
}

static int paint_images(cairo_t *cr, const results *outputs, double width, double height)
{
    const problem *made = outputs->made;
    picture_clear(cr, width, height);
    double panel_height = image_panel_height(made);
    for (int64_t c = 0; c < made->num_channel; c++) {
        const double *observed = outputs->observed + c * made->image_size;
        const double *predicted = outputs->predicted + c * made->image_size;
        double high = peak_of(observed, made->image_size);
        double predicted_high = peak_of(predicted, made->image_size);
        high = predicted_high > high ? predicted_high : high;
        char titles[2][96];
        snprintf(titles[0], sizeof titles[0], "observed, channel %lld (%g deg)", (long long)c,
                 outputs->cfg->instrument.angle[c]);
        snprintf(titles[1], sizeof titles[1], "predicted, channel %lld", (long long)c);
        const double *values[2] = {observed, predicted};
        for (int row = 0; row < 2; row++) {
            picture_map map = {values[row], made->num_sensor_x, made->num_sensor_y, 0.0,
                               high,        COLOURS_INTENSITY,  titles[row],        "electron"};
            if (picture_draw_map(cr, &map, 10.0 + (double)c * (IMAGE_PANEL_WIDTH + 10.0),
                                 10.0 + row * panel_height, IMAGE_PANEL_WIDTH,
                                 panel_height - 10.0) != 0) {
                return -1;
            }
        }
    }
    picture_text(cr,
                 "sensor x (dispersion) to the right, sensor y up; both rows of a channel "
                 "share its colour scale",
                 14.0, height - 12.0, 11.0, 0.0);
    return 0;
}

/* ---- merit.png ------------------------------------------------------------------------------- */

#define PLOT_LEFT 80.0
#define PLOT_RIGHT 170.0
#define PLOT_TOP 40.0
#define PLOT_BOTTOM 60.0

/* The plot's frame: where iteration i and value v land. */
typedef struct plot_frame {
    double left, top, width, height;
    double iterations;  /* the x axis runs from 0 to this */
    double low_decade;  /* log10 of the y axis's bottom */
    double high_decade; /* log10 of its top */
} plot_frame;

static double plot_x(const plot_frame *frame, double iteration)
{
    return frame->left + frame->width * iteration / frame->iterations;
}

static double plot_y(const plot_frame *frame, double value)
{
    double t = (log10(value) - frame->low_decade) / (frame->high_decade - frame->low_decade);
    return frame->top + frame->height * (1.0 - t);
}

/* Whole decades around every positive, finite value of the histories. */
static void fit_decades(const results *outputs, plot_frame *frame)
{
    const spart_mart_result *result = outputs->result;
    int64_t count =
        spart_mart_result_num_iterations(result) * spart_mart_result_num_channel(result);
    const double *chi2 = spart_mart_result_mean_chi_squared(result);
    double low = INFINITY;
    double high = 0.0;
    for (int64_t k = 0; k < count; k++) {
        if (chi2[k] > 0.0 && isfinite(chi2[k])) {
            low = chi2[k] < low ? chi2[k] : low;
            high = chi2[k] > high ? chi2[k] : high;
        }
    }
    if (!(high > 0.0)) {
        low = 0.1;
        high = 10.0;
    }
    frame->low_decade = floor(log10(low));
    frame->high_decade = ceil(log10(high));
    if (frame->high_decade <= frame->low_decade) {
        frame->high_decade = frame->low_decade + 1.0;
    }
}

static void draw_axes(cairo_t *cr, const plot_frame *frame)
{
    cairo_set_source_rgb(cr, 0.2, 0.2, 0.2);
    cairo_set_line_width(cr, 1.0);
    cairo_rectangle(cr, frame->left, frame->top, frame->width, frame->height);
    cairo_stroke(cr);
    char label[32];
    int decades = (int)(frame->high_decade - frame->low_decade);
    for (int k = 0; k <= decades; k++) {
        double decade = frame->low_decade + (double)k;
        double y = plot_y(frame, pow(10.0, decade));
        cairo_set_source_rgb(cr, 0.88, 0.88, 0.88);
        cairo_move_to(cr, frame->left, y);
        cairo_line_to(cr, frame->left + frame->width, y);
        cairo_stroke(cr);
        snprintf(label, sizeof label, "1e%+.0f", decade);
        picture_text(cr, label, frame->left - 6.0, y + 4.0, 11.0, 1.0);
    }
    int64_t step = (int64_t)ceil(frame->iterations / 10.0);
    for (int64_t i = 0; (double)i <= frame->iterations; i += step) {
        snprintf(label, sizeof label, "%lld", (long long)i);
        picture_text(cr, label, plot_x(frame, (double)i), frame->top + frame->height + 16.0, 11.0,
                     0.5);
    }
    picture_text(cr, "iteration", frame->left + frame->width / 2.0,
                 frame->top + frame->height + 36.0, 12.0, 0.5);
}

/* One history as a line: values[i * stride] for each iteration. */
static void draw_history(cairo_t *cr, const plot_frame *frame, const double *values, int64_t count,
                         int64_t stride)
{
    int drawing = 0;
    for (int64_t i = 0; i < count; i++) {
        double value = values[i * stride];
        if (!(value > 0.0) || !isfinite(value)) {
            drawing = 0;
            continue;
        }
        double x = plot_x(frame, (double)i);
        double y = plot_y(frame, value);
        if (drawing) {
            cairo_line_to(cr, x, y);
        } else {
            cairo_move_to(cr, x, y);
        }
        drawing = 1;
    }
    cairo_stroke(cr);
}

static void draw_legend_entry(cairo_t *cr, const plot_frame *frame, int row, const char *text,
                              const double rgb[3], double line_width)
{
    double x = frame->left + frame->width + 14.0;
    double y = frame->top + 12.0 + 18.0 * row;
    cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
    cairo_set_line_width(cr, line_width);
    cairo_move_to(cr, x, y - 4.0);
    cairo_line_to(cr, x + 24.0, y - 4.0);
    cairo_stroke(cr);
    picture_text(cr, text, x + 30.0, y, 11.0, 0.0);
}

static int paint_merit(cairo_t *cr, const results *outputs, double width, double height)
{
    const spart_mart_result *result = outputs->result;
    int64_t iterations = spart_mart_result_num_iterations(result);
    int64_t channels = spart_mart_result_num_channel(result);
    plot_frame frame = {PLOT_LEFT,
                        PLOT_TOP,
                        width - PLOT_LEFT - PLOT_RIGHT,
                        height - PLOT_TOP - PLOT_BOTTOM,
                        iterations > 1 ? (double)(iterations - 1) : 1.0,
                        0.0,
                        1.0};
    fit_decades(outputs, &frame);
    picture_clear(cr, width, height);
    picture_text(cr, "MART: merit (mean chi^2 over channels) per iteration, log scale", frame.left,
                 24.0, 13.0, 0.0);
    draw_axes(cr, &frame);
    const double *chi2 = spart_mart_result_mean_chi_squared(result);
    for (int64_t c = 0; c < channels; c++) {
        double rgb[3];
        picture_line_colour(c, rgb);
        cairo_set_source_rgb(cr, rgb[0], rgb[1], rgb[2]);
        cairo_set_line_width(cr, 1.0);
        draw_history(cr, &frame, chi2 + c, iterations, channels);
        if (c < 12) {
            char label[48];
            snprintf(label, sizeof label, "chi^2, channel %lld", (long long)c);
            draw_legend_entry(cr, &frame, (int)c + 1, label, rgb, 1.0);
        }
    }
    double black[3] = {0.0, 0.0, 0.0};
    if (outputs->merit != NULL) {
        cairo_set_source_rgb(cr, 0.0, 0.0, 0.0);
        cairo_set_line_width(cr, 2.5);
        draw_history(cr, &frame, outputs->merit, iterations, 1);
    }
    draw_legend_entry(cr, &frame, 0, "merit", black, 2.5);
    return 0;
}

/* ---- all three --------------------------------------------------------------------------------
 */

int pictures_write(const results *outputs, const char *folder, int overwrite, int *interrupted,
                   char *error, size_t error_size)
{
    const problem *made = outputs->made;
    int scene_rows = outputs->truth != NULL ? 2 : 1;
    int64_t image_columns = made->num_channel;
    picture_job jobs[3] = {
        {outputs, paint_scene, (int)(2.0 * SCENE_PANEL_WIDTH + 30.0),
         (int)(scene_rows * SCENE_PANEL_HEIGHT + SCENE_CAPTION + 10.0)},
        {outputs, paint_images, (int)((double)image_columns * (IMAGE_PANEL_WIDTH + 10.0) + 10.0),
         (int)(2.0 * image_panel_height(made) + 40.0)},
        {outputs, paint_merit, 760, 440},
    };
    const char *names[3];
    pictures_file_names(names);
    int result = 0;
    for (int k = 0; k < 3 && result == 0; k++) {
        if (cli_interrupted_before(names[k])) {
            *interrupted = 1;
            result = -1;
            break;
        }
        result =
            output_write(folder, names[k], overwrite, write_picture, &jobs[k], error, error_size);
    }
    /* cairo keeps font caches for the life of the program: give them back
     * (fontconfig's own stay: tests/cli/lsan.supp). */
    cairo_debug_reset_static_data();
    return result;
}
