// Package jinja renders Hugging Face chat templates the way transformers does: Python's
// jinja2 in an immutable sandbox with trim_blocks, lstrip_blocks, loop controls, the
// {% generation %} tag, transformers' tojson, raise_exception and strftime_now.
//
// Values follow Python: they print as Python's str() prints them (True, None, 1e-07, dicts
// with quotes), dicts keep key order, and the errors Python raises (str + dict, iterating
// None, calling list.append in the immutable sandbox, attributes of undefined values) are
// render errors, never silently rendered text.
package jinja
