"""The commands: one module per command group, each parsing its options
(declared once in options.py), making one library call and rendering the
result with quorumctl.render. main.py is the entry point and turns errors into
one line and an ExitStatus. What a command computes, writes or prints does not
belong here: it goes in the library layer that does that kind of work.
"""
