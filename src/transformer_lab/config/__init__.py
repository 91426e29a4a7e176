"""What a setting may be, and the configs a sweep composes: the first stage, which every
other imports.
"""
