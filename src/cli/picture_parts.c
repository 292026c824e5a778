/*
 * src/cli/picture_parts.c: colour maps, maps of arrays with colour bars,
 * and text, on cairo (see picture_parts.h).
 */
#include "picture_parts.h"

#include <math.h>
#include <stdio.h>

/* Room above a map for its title, and to its right for the colour bar. */
#define TITLE_HEIGHT 22.0
#define BAR_ROOM 64.0
#define BAR_WIDTH 12.0
#define TEXT_SIZE 12.0

/* Colour stops, evenly spaced from t = 0 to 1, linearly interpolated:
 * black through purple and orange to pale yellow for intensities (light
 * means more); blue through white to red for velocities (a Doppler shift
 * to the blue or to the red). */
static const double intensity_stops[5][3] = {{0.00, 0.00, 0.02},
                                             {0.34, 0.06, 0.43},
                                             {0.74, 0.22, 0.33},
                                             {0.98, 0.56, 0.04},
                                             {0.99, 1.00, 0.64}};
static const double velocity_stops[5][3] = {{0.13, 0.40, 0.67},
                                            {0.57, 0.77, 0.87},
                                            {0.97, 0.97, 0.97},
                                            {0.96, 0.65, 0.51},
                                            {0.70, 0.09, 0.17}};

void picture_colour(colour_map colours, double t, double rgb[3])
{
    const double(*stops)[3] = colours == COLOURS_VELOCITY ? velocity_stops : intensity_stops;
    /* written so that NaN lands on 0 too: an index from NaN is undefined */
    t = t >= 0.0 ? (t > 1.0 ? 1.0 : t) : 0.0;
    double position = t * 4.0;
    int index = (int)position;
    index = index > 3 ? 3 : index;
    double fraction = position - (double)index;
    for (int k = 0; k < 3; k++) {
        rgb[k] = stops[index][k] + fraction * (stops[index + 1][k] - stops[index][k]);
    }
}

/* Eight line colours a reader tells apart (also most colour-blind ones):
 * blue, orange, green, vermilion, purple, sky blue, yellow, grey. */
static const double line_colours[8][3] = {
    {0.00, 0.45, 0.70}, {0.90, 0.62, 0.00}, {0.00, 0.62, 0.45}, {0.84, 0.37, 0.00},
    {0.80, 0.47, 0.65}, {0.34, 0.71, 0.91}, {0.78, 0.70, 0.10}, {0.50, 0.50, 0.50}};

void picture_line_colour(int64_t k, double rgb[3])
{
    for (int c = 0; c < 3; c++) {
        rgb[c] = line_colours[k % 8][c];
    }
}

void picture_text(cairo_t *cr, const char *text, double x, double y, double size, double align)
{
    cairo_select_font_face(cr, "sans-serif", CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
    cairo_set_font_size(cr, size);
    cairo_text_extents_t extents;
    cairo_text_extents(cr, text, &extents);
    cairo_set_source_rgb(cr, 0.1, 0.1, 0.1);
    cairo_move_to(cr, x - align * extents.x_advance, y);
    cairo_show_text(cr, text);
}

void picture_clear(cairo_t *cr, double width, double height)
{
    cairo_set_source_rgb(cr, 1.0, 1.0, 1.0);
    cairo_rectangle(cr, 0.0, 0.0, width, height);
    cairo_fill(cr);
}

/* One 0xRRGGBB pixel for a value. */
static uint32_t pixel_of(const picture_map *map, double value)
{
    double rgb[3] = {0.6, 0.6, 0.6}; /* NaN: grey */
    if (!isnan(value)) {
        /* halves: high - low overflows to inf for limits near +-1e308 */
        double span = map->high / 2.0 - map->low / 2.0;
        double t = span > 0.0 ? (value / 2.0 - map->low / 2.0) / span : 0.5;
        picture_colour(map->colours, t, rgb);
    }
    uint32_t pixel = 0;
    for (int k = 0; k < 3; k++) {
        pixel = (pixel << 8) | (uint32_t)lround(rgb[k] * 255.0);
    }
    return pixel;
}

/* The array as an image of one device pixel per cell, y up. */
static cairo_surface_t *cells_surface(const picture_map *map)
{
    cairo_surface_t *surface =
        cairo_image_surface_create(CAIRO_FORMAT_RGB24, (int)map->num_x, (int)map->num_y);
    if (cairo_surface_status(surface) != CAIRO_STATUS_SUCCESS) {
        cairo_surface_destroy(surface);
        return NULL;
    }
    cairo_surface_flush(surface);
    unsigned char *data = cairo_image_surface_get_data(surface);
    int stride = cairo_image_surface_get_stride(surface);
    for (int64_t j = 0; j < map->num_y; j++) {
        uint32_t *row = (uint32_t *)(void *)(data + (map->num_y - 1 - j) * stride);
        for (int64_t i = 0; i < map->num_x; i++) {
            row[i] = pixel_of(map, map->values[i * map->num_y + j]);
        }
    }
    cairo_surface_mark_dirty(surface);
    return surface;
}

static void draw_colour_bar(cairo_t *cr, const picture_map *map, double x, double y, double height)
{
    cairo_pattern_t *gradient = cairo_pattern_create_linear(0.0, y + height, 0.0, y);
    for (int k = 0; k <= 16; k++) {
        double rgb[3];
        picture_colour(map->colours, k / 16.0, rgb);
        cairo_pattern_add_color_stop_rgb(gradient, k / 16.0, rgb[0], rgb[1], rgb[2]);
    }
    cairo_set_source(cr, gradient);
    cairo_rectangle(cr, x, y, BAR_WIDTH, height);
    cairo_fill(cr);
    cairo_pattern_destroy(gradient);
    char label[32];
    snprintf(label, sizeof label, "%.3g", map->high);
    picture_text(cr, label, x + BAR_WIDTH + 4.0, y + TEXT_SIZE * 0.8, TEXT_SIZE * 0.85, 0.0);
    snprintf(label, sizeof label, "%.3g", map->low);
    picture_text(cr, label, x + BAR_WIDTH + 4.0, y + height, TEXT_SIZE * 0.85, 0.0);
}

int picture_draw_map(cairo_t *cr, const picture_map *map, double x, double y, double width,
                     double height)
{
    char title[256];
    snprintf(title, sizeof title, "%s [%s]", map->title, map->unit);
    picture_text(cr, title, x + (width - BAR_ROOM) / 2.0, y + TEXT_SIZE + 2.0, TEXT_SIZE, 0.5);
    double room_width = width - BAR_ROOM;
    double room_height = height - TITLE_HEIGHT;
    double scale = room_width / (double)map->num_x;
    if (room_height / (double)map->num_y < scale) {
        scale = room_height / (double)map->num_y;
    }
    double shown_width = scale * (double)map->num_x;
    double shown_height = scale * (double)map->num_y;
    double left = x + (room_width - shown_width) / 2.0;
    double top = y + TITLE_HEIGHT;
    cairo_surface_t *cells = cells_surface(map);
    if (cells == NULL) {
        return -1;
    }
    cairo_save(cr);
    cairo_translate(cr, left, top);
    cairo_scale(cr, scale, scale);
    cairo_set_source_surface(cr, cells, 0.0, 0.0);
    cairo_pattern_set_filter(cairo_get_source(cr), CAIRO_FILTER_NEAREST);
    cairo_rectangle(cr, 0.0, 0.0, (double)map->num_x, (double)map->num_y);
    cairo_fill(cr);
    cairo_restore(cr);
    cairo_surface_destroy(cells);
    cairo_set_source_rgb(cr, 0.3, 0.3, 0.3);
    cairo_set_line_width(cr, 1.0);
    cairo_rectangle(cr, left - 0.5, top - 0.5, shown_width + 1.0, shown_height + 1.0);
    cairo_stroke(cr);
    draw_colour_bar(cr, map, left + shown_width + 10.0, top, shown_height);
    return 0;
}
