"""The rank overloads of the Fortran module: what generate_fortran.py writes
as generic interfaces over array ranks.

Each entry names a public generic, the specific procedures it is made of
(one per combination of ranks of its arrays), their arguments, and the one
statement they run: most locate their arrays (a null address for an empty
one, as c_loc needs an element) and call the hand-written routine that does
the work (spart_wrappers_*.inc). Only double precision arrays (c_double)
are overloaded, as the C library computes in it.
"""

RANKS = (1, 2, 3, 4)


class Array:
    """An array argument whose rank varies.

    located: declare <name>_at, the array's address (null when empty);
    "optional": the same for an optional array, with size_<name> its size
    (0 when absent); False: the array is used as it is.
    same_rank_as: the array whose rank this one follows (no combinations
    of its own)."""

    def __init__(self, name, intent, ranks=RANKS, located=True, optional=False,
                 same_rank_as=None, attributes="target, contiguous"):
        self.name, self.intent, self.ranks = name, intent, ranks
        self.located, self.optional, self.same_rank_as = located, optional, same_rank_as
        self.attributes = attributes


class Generic:
    def __init__(self, name, specific, summary, comment, arguments, declarations, arrays,
                 body, result="status", result_type="integer(c_int)"):
        self.name, self.specific, self.summary, self.comment = name, specific, summary, comment
        self.arguments, self.declarations, self.arrays = arguments, declarations, arrays
        self.body, self.result, self.result_type = body, result, result_type


CONTEXT = "type(spart_context), intent(in) :: context"

MART_OPTIONS = ["real(c_double), intent(in), optional :: gamma, threshold, target",
                "integer(c_int), intent(in), optional :: stop_rule",
                "integer(c_int64_t), intent(in), optional :: max_iterations",
                "logical, intent(in), optional :: keep_intermediate",
                "real(c_double), intent(in), optional, target, contiguous :: guess(:)",
                "procedure(spart_mart_callback_function), optional :: callback",
                "type(c_ptr), intent(in), optional :: callback_user"]


def _instrument_image(name, observe):
    arguments = ["context", "instrument", "scene"] + (["seed"] if observe else []) + \
        ["images", "widths"]
    return Generic(
        name, name[len("spart_"):], None if observe else
        "The instrument's products on arrays in their natural shapes (scene\n"
        "(num_scene_y, num_scene_x, num_wavelength), images (num_sensor_y,\n"
        "num_sensor_x, num_channel), backprojected scenes (num_scene_y,\n"
        "num_scene_x, num_wavelength, num_channel)) or flat (rank 1).",
        None if observe else
        "spart_instrument_image(context, instrument, scene, images [, widths]):\n"
        "the expected images of a scene and, with widths, their noise widths.\n"
        "spart_instrument_observe(context, instrument, scene, seed, images [, widths]):\n"
        "synthetic observations of a scene (seed: a non-negative integer).",
        arguments,
        [CONTEXT, "type(spart_instrument), intent(in) :: instrument"] +
        (["integer(c_int64_t), intent(in) :: seed"] if observe else []),
        [Array("scene", "in", (1, 3)), Array("images", "inout", (1, 3)),
         Array("widths", "inout", optional=True, same_rank_as="images",
               attributes="optional, target, contiguous")],
        ["status = instrument_image_located(context, instrument, scene_at, "
         "size(scene, kind=c_int64_t), images_at, size(images, kind=c_int64_t), widths_at, "
         "size_widths, " + (".true., seed)" if observe else ".false., 0_c_int64_t)")])


def _psf_apply(name, adjoint):
    return Generic(
        name, name[len("spart_"):], None if adjoint else
        "The PSF and its adjoint on images of rank 1 to 4 (see spart_psf_apply\n"
        "below); input and output of the same rank.",
        None if adjoint else
        "spart_psf_apply(context, psf, input, output) and\n"
        "spart_psf_apply_adjoint(...): output = P input or P^T input. input:\n"
        "the image shape in Fortran order (spart_psf_shape_image), or that\n"
        "shape without its dimensions of extent 1, or all the values in one\n"
        "dimension; output: as many values, of the same rank. Not in place:\n"
        "give a different array for output.",
        ["context", "psf", "input", "output"],
        [CONTEXT, "type(spart_psf), intent(in) :: psf"],
        [Array("input", "in"), Array("output", "inout", same_rank_as="input")],
        ["status = psf_apply_located(context, psf, input_at, shape(input, c_int64_t), "
         "output_at, size(output, kind=c_int64_t), " + (".true.)" if adjoint else ".false.)")])


GENERICS = [
    Generic(
        "spart_array_of", "array_of", "A copy of an array of rank 1 to 4 as a spart_array.",
        None, ["a"], [], [Array("a", "in", located=False, attributes=None)],
        ["allocate (array%values(size(a)), array%dims({rank_a}))",
         "array%values = reshape(a, [size(a)])",
         "array%dims = shape(a, c_int64_t)"],
        result="array", result_type="type(spart_array)"),
    Generic(
        "spart_regridder_apply", "apply",
        "y = A x for x and y of rank 1 to 4 (see spart_regridder_apply below).",
        "spart_regridder_apply(context, regridder, x, y [, workspace]): y = A x.\n"
        "x: the input shape in Fortran order (spart_regridder_shape_input),\n"
        "or that shape without its dimensions of length 1, or all input values\n"
        "in one dimension; each followed by batch dimensions (each a product of\n"
        "its own, C's leading axes). y: any shape of\n"
        "the right number of values, laid out as spart_regridder_apply_shape\n"
        "says (y(i, b) for x(:, b) when both are flat). workspace (optional):\n"
        "at least spart_regridder_workspace_size bytes, in 8-byte values.",
        ["context", "regridder", "x", "y", "workspace"],
        [CONTEXT, "type(spart_regridder), intent(in) :: regridder",
         "real(c_double), intent(inout), optional, target, contiguous :: workspace(:)"],
        [Array("x", "in"), Array("y", "inout")],
        ["status = apply_located(context, regridder, x_at, shape(x, c_int64_t), y_at, "
         "size(y, kind=c_int64_t), workspace)"]),
    Generic(
        "spart_mart_solve", "mart_solve", "MART on observed images of rank 1 to 4.",
        "spart_mart_solve(context, operators, observed, result [, gamma, stop_rule,\n"
        "threshold, target, max_iterations, keep_intermediate, guess, callback,\n"
        "callback_user]): MART on observed images (num_channel x image_size values,\n"
        "any shape: (image values, channels) for a regridder pair, (num_sensor_y,\n"
        "num_sensor_x, num_channel) for an instrument). guess: scene_size values.\n"
        "The other options as the fields of spart_mart_options (C defaults when\n"
        "absent); callback: a bind(C) function of interface\n"
        "spart_mart_callback_function, called with callback_user.",
        ["context", "operators", "observed", "result", "gamma", "stop_rule", "threshold",
         "target", "max_iterations", "keep_intermediate", "guess", "callback",
         "callback_user"],
        [CONTEXT, "type(spart_mart_operators), intent(in) :: operators",
         "type(spart_mart_result), intent(out) :: result"] + MART_OPTIONS,
        [Array("observed", "in")],
        ["status = mart_solve_located(context, operators, observed_at, "
         "size(observed, kind=c_int64_t), result, gamma, stop_rule, threshold, target, "
         "max_iterations, keep_intermediate, guess, callback, callback_user)"]),
    Generic(
        "spart_mart_solve_frames", "mart_solve_frames",
        "MART on many frames of observed images, of rank 1 to 4.",
        "spart_mart_solve_frames(context, operators, observed, results [, batch_frames,\n"
        "gamma, stop_rule, threshold, target, max_iterations, keep_intermediate, guess,\n"
        "callback, callback_user]): MART on size(results) frames at once, each with\n"
        "its own merits, rule and solution in results(f), the bits of spart_mart_solve\n"
        "on that frame alone. observed: num_channel x image_size values a frame, the\n"
        "frame last (any shape: (image values, channels, frames) for a regridder\n"
        "pair). batch_frames: frames a batch (0, the default: C's choice). guess (rank 1):\n"
        "scene_size values a frame, the frame last. The other options as for\n"
        "spart_mart_solve; the callback is told the frame (progress%frame, from 0)\n"
        "and a nonzero return stops that frame only.",
        ["context", "operators", "observed", "results", "batch_frames", "gamma",
         "stop_rule", "threshold", "target", "max_iterations", "keep_intermediate", "guess",
         "callback", "callback_user"],
        [CONTEXT, "type(spart_mart_operators), intent(in) :: operators",
         "type(spart_mart_result), intent(out) :: results(:)",
         "integer(c_int64_t), intent(in), optional :: batch_frames"] + MART_OPTIONS,
        [Array("observed", "in")],
        ["status = mart_solve_frames_located(context, operators, observed_at, "
         "size(observed, kind=c_int64_t), results, batch_frames, gamma, stop_rule, "
         "threshold, target, max_iterations, keep_intermediate, guess, callback, "
         "callback_user)"]),
    _instrument_image("spart_instrument_image", observe=False),
    _instrument_image("spart_instrument_observe", observe=True),
    Generic(
        "spart_instrument_backproject", "instrument_backproject", None,
        "spart_instrument_backproject(context, instrument, images, scenes): one\n"
        "scene per channel, (num_scene_y, num_scene_x, num_wavelength, num_channel)\n"
        "or flat, from images (num_sensor_y, num_sensor_x, num_channel) or flat.",
        ["context", "instrument", "images", "scenes"],
        [CONTEXT, "type(spart_instrument), intent(in) :: instrument"],
        [Array("images", "in", (1, 3)), Array("scenes", "inout", (1, 4))],
        ["status = instrument_backproject_located(context, instrument, images_at, "
         "size(images, kind=c_int64_t), scenes_at, size(scenes, kind=c_int64_t))"]),
    _psf_apply("spart_psf_apply", adjoint=False),
    _psf_apply("spart_psf_apply_adjoint", adjoint=True),
]
