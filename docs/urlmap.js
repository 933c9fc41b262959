// SPDX-License-Identifier: LGPL-2.1-or-later
//
// Where the reference of each namespace the Hp docs link to lives, for the
// external links of gi-docgen ([struct@GLib.Error], [class@GObject.Object],
// ...); hp-protocols.toml.in names this file as urlmap_file.
baseURLs = [
  ['GLib', 'https://docs.gtk.org/glib/'],
  ['GModule', 'https://docs.gtk.org/gmodule/'],
  ['GObject', 'https://docs.gtk.org/gobject/'],
  ['Gio', 'https://docs.gtk.org/gio/'],
  ['Json', 'https://gnome.pages.gitlab.gnome.org/json-glib/'],
]
