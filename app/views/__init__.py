"""HTML and SVG views: the explorer page (``/explore``) and the pictures it and the CLI draw."""
