set terminal svg size 960,600 dynamic
set output 'algbw_size_mi300x-100g.svg'
set datafile missing '?'
set termoption noenhanced
set key outside right top
set grid
cd 'results/data'
set title 'Algorithm bandwidth vs per-GPU size (mi300x-100g, 4x8, Zipf 0.8)'
set xlabel 'mean bytes per GPU (MiB)'
set ylabel 'algbw (GB/s)'
set logscale x 2
plot 'algbw_size_mi300x-100g.dat' using 1:2 with linespoints lw 2 title 'fast', 'algbw_size_mi300x-100g.dat' using 1:3 with linespoints lw 2 title 'nccl', 'algbw_size_mi300x-100g.dat' using 1:4 with linespoints lw 2 title 'pxn', 'algbw_size_mi300x-100g.dat' using 1:5 with linespoints lw 2 title 'hier', 'algbw_size_mi300x-100g.dat' using 1:6 with linespoints lw 2 title 'spreadout', 'algbw_size_mi300x-100g.dat' using 1:7 with linespoints lw 2 title 'fanout'
