set terminal svg size 960,600 dynamic
set output 'speedup_skew_h200.svg'
set datafile missing '?'
set termoption noenhanced
set key outside right top
set grid
cd 'results/data'
set title 'FAST speedup over each baseline vs skew (h200, 4x8, 128 MiB per GPU)'
set xlabel 'Zipf skew of pair sizes (0 = uniform random)'
set ylabel 'speedup (baseline time / FAST time)'
set logscale y 2
plot 'speedup_skew_h200.dat' using 1:2 with linespoints lw 2 title 'nccl', 'speedup_skew_h200.dat' using 1:3 with linespoints lw 2 title 'pxn', 'speedup_skew_h200.dat' using 1:4 with linespoints lw 2 title 'hier', 'speedup_skew_h200.dat' using 1:5 with linespoints lw 2 title 'spreadout', 'speedup_skew_h200.dat' using 1:6 with linespoints lw 2 title 'fanout', 1 with lines dt 2 lc rgb 'black' title 'parity'
