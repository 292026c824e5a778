/*
 * src/cli/picture_parts.h: the pieces the pictures are made of, on a cairo
 * context: colour maps, a map of a 2-D array with its colour bar, titles
 * and labels. Coordinates are in device pixels of the picture.
 */
#ifndef SPART_CLI_PICTURE_PARTS_H
#define SPART_CLI_PICTURE_PARTS_H

#include <stdint.h>

#include <cairo.h>

/* How values become colours. */
typedef enum colour_map {
    COLOURS_INTENSITY = 0, /* dark to bright, for values >= 0 */
    COLOURS_VELOCITY = 1   /* blue (towards us) through white to red (away) */
} colour_map;

/* A 2-D array to show: values[i * num_y + j] is cell (i, j); i runs along
 * the horizontal axis (left to right), j along the vertical one (bottom to
 * top). NaN cells are grey. */
typedef struct picture_map {
    const double *values;
    int64_t num_x;
    int64_t num_y;
    double low; /* the colour scale */
    double high;
    colour_map colours;
    const char *title;
    const char *unit; /* of the values, shown after the title */
} picture_map;

/* Draw `map` into the box (x, y, width, height) with nearest-neighbour
 * cells, its title and unit above and a colour bar to the right (inside
 * the box).
 * Returns 0, or -1 when cairo runs out of memory. */
int picture_draw_map(cairo_t *cr, const picture_map *map, double x, double y, double width,
                     double height);

/* Text with its left end (align 0), centre (0.5) or right end (1) at x and
 * its baseline at y. */
void picture_text(cairo_t *cr, const char *text, double x, double y, double size, double align);

/* A white page of the picture's size. */
void picture_clear(cairo_t *cr, double width, double height);

/* A value's colour in `colours`, for a position t from 0 to 1. */
void picture_colour(colour_map colours, double t, double rgb[3]);

/* Colour k of a few well-separated colours, for lines (cycles after 8). */
void picture_line_colour(int64_t k, double rgb[3]);

#endif /* SPART_CLI_PICTURE_PARTS_H */
