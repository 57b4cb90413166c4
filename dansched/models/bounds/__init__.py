"""bounds"""
